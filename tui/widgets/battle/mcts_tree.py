"""The red agent's search tree, growing as the engine adds nodes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.binding import BindingType
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from tui.widgets.text_cut import middle_cut

TOGGLE_STYLE = Style.from_meta({"toggle": True})  # clicking the icon toggles the node, as in Tree
SEVERITY_STYLE = {"low": "yellow", "medium": "dark_orange", "high": "red", "critical": "bold red reverse"}
SCROLLBAR = 1  # the vertical scrollbar's column, counted whether or not it shows so a label's cut never flickers
MIN_ACTION = 8  # cells an action keeps however narrow the panel: beyond that the tree scrolls sideways


@dataclass
class NodeStats:
    action: str
    parent_id: int | None
    visits: int = 0
    mean_value: float = 0.0
    severity: str | None = None


class MctsTree(Tree[int]):
    """Nodes labelled ``action  n=visits v=mean``; the best node's path in bold green; findings flagged."""

    DEFAULT_CSS = """
    MctsTree {
        border: round $primary 50%;
        border-title-color: $text-muted;
        padding: 0;
        scrollbar-size-vertical: 1;
    }
    MctsTree:focus { border: round $primary; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [("f", "follow", "Follow")]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("search", id=id)
        self.show_root = False
        self.guide_depth = 2
        self.stats: dict[int, NodeStats] = {}
        self._by_id: dict[int, TreeNode[int]] = {}
        self.best_path: tuple[int, ...] = ()
        self.best_value: float | None = None
        self.follow = True
        self._newest: TreeNode[int] | None = None
        self._best_id: int | None = None
        self._rescan = False
        self._settled: tuple[int | None, float | None] = (None, None)
        self._pending_findings: dict[int, str] = {}
        self._dirty: set[int] = set()
        self._added = False
        self.finding_in_view: int | None = None  # the node of the newest finding, held in view until ``f``

    def on_mount(self) -> None:
        self.border_title = "Red agent search"

    def set_enabled(self, enabled: bool) -> None:
        self.border_title = "Red agent search" if enabled else "Red agent: off"

    def clear_search(self) -> None:
        self.clear()
        self.stats.clear()
        self._by_id.clear()
        self.best_path = ()
        self.best_value = None
        self.follow = True
        self._newest = None
        self._best_id = None
        self._rescan = False
        self._settled = (None, None)
        self._pending_findings.clear()
        self._dirty.clear()
        self._added = False
        self.finding_in_view = None
        self.border_subtitle = ""

    def add_node(self, node_id: int, parent_id: int | None, action: str) -> None:
        if node_id in self._by_id:
            return
        parent = self._by_id.get(parent_id) if parent_id is not None else None
        self.stats[node_id] = NodeStats(action, parent_id if parent is not None else None)
        holder = parent or self.root
        if parent is not None and not parent.allow_expand:
            parent.allow_expand = True  # already expanded (below): no NodeExpanded message per new parent
        pending = self._pending_findings.pop(node_id, None)
        if pending is not None:
            self.stats[node_id].severity = pending
        node = holder.add(action, data=node_id, expand=True, allow_expand=False)
        self._by_id[node_id] = node
        self._newest = node
        self._added = True
        if pending is not None:
            self._hold_finding(node_id)

    def update_node(self, node_id: int, visits: int, mean_value: float) -> None:
        """Update a node's figures; call ``settle`` after a batch to move the best path."""
        stats = self.stats.get(node_id)
        if stats is None:
            return
        stats.visits, stats.mean_value = visits, mean_value
        self._relabel(node_id)
        if node_id == self._best_id:
            if self.best_value is not None and mean_value < self.best_value:
                self._rescan = True
            else:
                self.best_value = mean_value
        elif visits > 0 and self._beats_best(node_id, mean_value):
            self._best_id, self.best_value = node_id, mean_value

    def settle(self) -> bool:
        """Finish a batch: move the best path, then repaint the labels that changed.

        The best node is the visited node with the highest mean (lowest id on ties). Returns True
        when the best node or its value changed since the last call.
        """
        changed = self._settle_best()
        self._flush_labels()
        return changed

    def _flush_labels(self) -> None:
        """Labels are drawn from ``stats`` (``render_label``); here the tree learns which to redraw.

        A batch that added nodes has already invalidated every line; otherwise only the changed
        nodes are touched, through the public ``set_label``.
        """
        if not self._added:
            for node_id in self._dirty:
                node = self._by_id.get(node_id)
                if node is not None:
                    node.set_label(node.label)
        self._dirty.clear()
        self._added = False

    def _settle_best(self) -> bool:
        if self._rescan:
            self._rescan = False
            self._best_id, self.best_value = None, None
            for node_id, stats in self.stats.items():
                if stats.visits > 0 and self._beats_best(node_id, stats.mean_value):
                    self._best_id, self.best_value = node_id, stats.mean_value
        settled = (self._best_id, self.best_value)
        if settled == self._settled:
            return False
        self._settled = settled
        old = set(self.best_path)
        self.best_path = self.path_to(self._best_id) if self._best_id is not None else ()
        for changed in old.symmetric_difference(self.best_path):
            self._relabel(changed)
        return self.best_value is not None

    def _beats_best(self, node_id: int, mean_value: float) -> bool:
        if self._best_id is None or self.best_value is None:
            return True
        return mean_value > self.best_value or (mean_value == self.best_value and node_id < self._best_id)

    def mark_finding(self, node_id: int | None, severity: str) -> None:
        """Flag ``node_id``; a finding may be confirmed before its node is added, so it waits for it."""
        if node_id is None:
            return
        if node_id not in self.stats:
            self._pending_findings[node_id] = severity
            return
        self.stats[node_id].severity = severity
        self._relabel(node_id)
        self._hold_finding(node_id)

    def _hold_finding(self, node_id: int) -> None:
        """Scroll a confirmed finding into view and keep it there (the newest node no longer pulls the view)."""
        self.follow = False
        self.finding_in_view = node_id
        self.border_subtitle = "⚑ in view · f: follow newest"
        self.call_after_refresh(self._scroll_to_finding)

    def _scroll_to_finding(self) -> None:
        node = self._by_id.get(self.finding_in_view) if self.finding_in_view is not None else None
        if node is not None and not self.follow:
            self.scroll_to_node(node, animate=False)

    def _let_go(self) -> None:
        """The user scrolls or moves the cursor: neither the newest node nor a finding pulls the view any more."""
        self.follow = False
        self.finding_in_view = None
        self.border_subtitle = ""

    def follow_newest(self) -> None:
        """Scroll the newest node (or the finding held in view) into view unless the user has taken over the
        scrolling; nodes added above a finding would otherwise push it out of view."""
        if self.follow and self._newest is not None:
            # after the refresh: the new lines only count toward the scroll range once laid out
            self.call_after_refresh(self._scroll_to_newest)
        elif self.finding_in_view is not None:
            self.call_after_refresh(self._scroll_to_finding)

    def _scroll_to_newest(self) -> None:
        if self.follow and self._newest is not None:
            self.scroll_to_node(self._newest, animate=False)

    def action_follow(self) -> None:
        self.follow = True
        self.finding_in_view = None
        self.border_subtitle = ""
        self.follow_newest()
        self.notify("following the newest node", timeout=2)

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._let_go()

    def _on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._let_go()

    @on(Tree.NodeHighlighted)
    def _user_moved(self, event: Tree.NodeHighlighted[int]) -> None:
        if self.has_focus:
            self._let_go()

    def path_to(self, node_id: int) -> tuple[int, ...]:
        path: list[int] = []
        current: int | None = node_id
        while current is not None and current in self.stats:
            path.append(current)
            current = self.stats[current].parent_id
        return tuple(reversed(path))

    def label_of(self, node_id: int) -> str:
        """The label as drawn (without the expand icon), without styles."""
        return self._label(node_id).plain

    def _plain_label(self, node_id: int, room: int | None = None) -> str:
        return "".join(self._label_parts(node_id, room))

    def _label_parts(self, node_id: int, room: int | None) -> tuple[str, str, str]:
        """The flag, the action (cut in its middle to fit ``room`` cells, when the panel has a size) and the figures."""
        stats = self.stats[node_id]
        flag = f"⚑ {stats.severity} " if stats.severity is not None else ""
        figures = f"  n={stats.visits} v={stats.mean_value:.2f}"
        action = stats.action
        if room is not None and room > 0 and len(flag) + len(action) + len(figures) > room:
            action = middle_cut(action, max(MIN_ACTION, room - len(flag) - len(figures)), MIN_ACTION // 2)
        return flag, action, figures

    def _room(self, node: TreeNode[int]) -> int:
        """The cells a node's label may take: the panel's width less the guides before it and the scrollbar."""
        depth, parent = 0, node.parent
        while parent is not None and parent is not self.root:
            depth, parent = depth + 1, parent.parent
        icon = len(self.ICON_NODE) if node.allow_expand else 0
        return self.content_region.width - SCROLLBAR - depth * self.guide_depth - icon

    def _relabel(self, node_id: int) -> None:
        self._dirty.add(node_id)

    def render_label(self, node: TreeNode[int], base_style: Style, style: Style) -> Text:
        """Drawn from the node's current figures: an update only marks the node for redrawing."""
        if node.data is None or node.data not in self.stats:
            return super().render_label(node, base_style, style)
        label = self._label(node.data, self._room(node))
        label.stylize(style)
        if node.allow_expand:
            icon = self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE
            return Text.assemble((icon, base_style + TOGGLE_STYLE), label)
        return label

    def get_label_width(self, node: TreeNode[int]) -> int:
        """Measured from the plain label: the tree asks for every line's width on each rebuild."""
        if node.data is None or node.data not in self.stats:
            return super().get_label_width(node)
        icon = len(self.ICON_NODE) if node.allow_expand else 0
        return icon + cell_len(self._plain_label(node.data, self._room(node)))

    def _label(self, node_id: int, room: int | None = None) -> Text:
        """``⚑ severity action  n=… v=…``; in ``room`` cells the action gives way (cut in its middle), never the
        flag or the figures."""
        stats = self.stats[node_id]
        on_best = node_id in self.best_path
        flag, action, figures = self._label_parts(node_id, room)
        text = Text()
        if flag:  # first, so a narrow panel still shows it
            text.append(flag, style=SEVERITY_STYLE.get(stats.severity or "", "red"))
        text.append(action, style="bold green" if on_best else "")
        text.append(figures, style="green" if on_best else "dim")
        return text
