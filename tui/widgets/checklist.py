"""A selection list whose boxes read ☑ / ☐, so chosen and not chosen differ by shape, not only by colour."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widgets import OptionList, SelectionList
from textual.widgets.option_list import OptionDoesNotExist

CHECKED = "☑"
UNCHECKED = "☐"
GUTTER = 2  # the box and a space


class Checklist(SelectionList[str]):
    """``SelectionList`` drawn with a glyph per state: ``☑ name`` chosen, ``☐ name`` not."""

    DEFAULT_CSS = """
    Checklist > .checklist--checked { color: $success; text-style: bold; }
    Checklist > .checklist--unchecked { color: $text-muted; }
    """
    COMPONENT_CLASSES = SelectionList.COMPONENT_CLASSES | {"checklist--checked", "checklist--unchecked"}

    def _get_left_gutter_width(self) -> int:
        return GUTTER

    def render_line(self, y: int) -> Strip:
        line = OptionList.render_line(self, y)  # the prompt alone, without SelectionList's coloured button
        index = self.scroll_offset.y + y
        try:
            option = self.get_option_at_index(index)
        except OptionDoesNotExist:
            return line
        checked = option.value in self.selected
        component = "checklist--checked" if checked else "checklist--unchecked"
        base = next(iter(line)).style if line.cell_length else self.rich_style
        style = (base or Style()) + self.get_component_rich_style(component) + Style(meta={"option": index})
        return Strip([Segment(CHECKED if checked else UNCHECKED, style), Segment(" ", base), *line])
