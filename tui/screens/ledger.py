"""The ledger screen: list, filter, sort, verify, inspect and export the signed entries."""

from __future__ import annotations

import time
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, ProgressBar, Static

from logomesh.plural import counted
from tui.ledger_source import LedgerSource, LedgerUnavailable
from tui.messages import BundleExported, LedgerLoaded, LedgerVerified, VerifyProgressed
from tui.screens.entry import EntryScreen
from tui.screens.export_dialog import ExportDialog, folder_problem
from tui.widgets.console_footer import ConsoleFooter
from tui.widgets.ledger.entries_table import EntriesTable


def bundle_path(home: Path, sequences: list[int]) -> Path:
    """``<home>/exports/bundle-<first>-<last>-<unix time>[-n]/``, a new folder as ``export dboms`` writes."""
    span = f"{min(sequences)}-{max(sequences)}" if sequences else "empty"
    base = home / "exports" / f"bundle-{span}-{int(time.time())}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


class LedgerScreen(Screen[None]):
    DEFAULT_CSS = """
    LedgerScreen #toolbar { height: 1; }
    LedgerScreen #filter { width: 1fr; }
    LedgerScreen #progress { width: 30; display: none; }
    LedgerScreen.verifying #progress { display: block; }
    LedgerScreen #summary { height: 1; background: $panel; padding: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "verify", "Verify"),
        Binding("e", "export", "Export"),
        Binding("slash", "focus_filter", "Filter"),
        Binding("r", "reload", "Reload", show=False),  # in f1 and the palette: the 80-column footer keeps f1
        Binding("escape", "leave_filter", "Leave the filter box", show=False),
    ]

    def __init__(self, home: Path) -> None:
        super().__init__(id="ledger")
        self.home = home
        self.source = LedgerSource(home)
        self.verifying = False
        self.loaded = False
        self.last_verify: LedgerVerified | None = None
        self.last_export: BundleExported | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="toolbar"):
            yield Input(placeholder="/ filter: words matching any column", id="filter", compact=True)
            yield ProgressBar(id="progress", show_eta=False)
        yield EntriesTable(id="entries")
        yield Static("", id="summary")
        yield ConsoleFooter()

    def on_screen_resume(self) -> None:
        self.action_reload()
        self.query_one(EntriesTable).focus()

    @property
    def table(self) -> EntriesTable:
        return self.query_one(EntriesTable)

    def action_reload(self) -> None:
        """Read the ledger in a thread (a large ledger takes a while), then show it."""
        self.loaded = False
        self._summary("reading the ledger…")
        self.run_worker(self._load, thread=True, group="load", exclusive=True)

    def _load(self) -> None:
        try:
            rows = self.source.rows()
        except Exception as exc:  # a missing or broken ledger is shown, never raised
            self.post_message(LedgerLoaded([], f"cannot read the ledger under {self.home}: {exc}".splitlines()[0]))
            return
        self.post_message(LedgerLoaded(rows))

    @on(LedgerLoaded)
    def _loaded(self, message: LedgerLoaded) -> None:
        self.table.set_rows(message.rows)
        self.loaded = True
        self._summary(message.error)

    def action_focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    @on(Input.Changed, "#filter")
    def _filter(self, event: Input.Changed) -> None:
        self.table.set_filter(event.value)
        self._summary()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.table.focus()

    def action_leave_filter(self) -> None:
        """Esc in the filter box: back to the table, keeping the filter, so the next keys are shortcuts again."""
        if self.query_one("#filter", Input).has_focus:
            self.table.focus()

    @on(EntriesTable.MarksChanged)
    @on(EntriesTable.SortChanged)
    def _table_changed(self) -> None:
        self._summary()

    @on(DataTable.RowSelected)
    def _open_entry(self, event: DataTable.RowSelected) -> None:
        self.open_entry(self.table.selected_sequence())

    def open_entry(self, sequence: int | None) -> None:
        row = next((r for r in self.table.all_rows if r.sequence == sequence), None)
        if row is None:
            return
        try:
            detail = self.source.detail(row.battle_id)
        except Exception as exc:
            self.notify(f"cannot read entry #{sequence}: {exc}".splitlines()[0], severity="error")
            return
        self.app.push_screen(EntryScreen(detail))

    # verify

    def action_verify(self) -> None:
        if self.verifying:
            return
        self.verifying = True
        self.add_class("verifying")
        self.query_one(ProgressBar).update(total=max(1, len(self.table.all_rows)), progress=0)
        self._summary("verifying…")
        self.run_worker(self._verify, thread=True, group="verify")

    def _verify(self) -> None:
        def progressed(done: int, total: int) -> None:
            self.post_message(VerifyProgressed(done, total))

        try:
            report = self.source.verify(progressed)
        except Exception as exc:
            self.post_message(LedgerVerified({}, False, f"verification could not run: {exc}".splitlines()[0]))
            return
        self.post_message(LedgerVerified(report.marks, report.ok, report.summary))

    @on(VerifyProgressed)
    def _progressed(self, message: VerifyProgressed) -> None:
        self.query_one(ProgressBar).update(total=max(1, message.total), progress=message.done)

    @on(LedgerVerified)
    def _verified(self, message: LedgerVerified) -> None:
        self.verifying = False
        self.last_verify = message
        self.remove_class("verifying")
        self.table.set_marks(message.marks)
        self._summary(message.summary)
        self.notify(message.summary, severity="information" if message.ok else "error", timeout=6)

    # export

    def action_export(self) -> None:
        sequences = sorted(self.table.marked) or ([s] if (s := self.table.selected_sequence()) is not None else [])
        if not sequences:
            self.notify("nothing to export: the ledger is empty", severity="warning")
            return
        def chosen(out: Path | None) -> None:
            if out is None:
                self.notify("export cancelled: nothing written", timeout=3)
                return
            self.run_worker(lambda: self._export(sequences, out), thread=True, group="export")

        self.app.push_screen(ExportDialog(len(sequences), bundle_path(self.home, sequences)), chosen)

    def _export(self, sequences: list[int], out: Path) -> None:
        try:
            problem = folder_problem(out)  # checked again: something may have appeared since the dialog
            if problem is not None:
                raise LedgerUnavailable(problem)
            out.mkdir(parents=True, exist_ok=True)
            written = self.source.export(sequences, out)
        except Exception as exc:
            self.post_message(BundleExported(None, len(sequences), f"{exc}".splitlines()[0]))
            return
        self.post_message(BundleExported(str(written), len(sequences)))

    @on(BundleExported)
    def _exported(self, message: BundleExported) -> None:
        self.last_export = message
        if message.error:
            self.notify(f"export failed: {message.error}", severity="error", timeout=8)
        else:
            self.notify(f"exported {counted(message.count, 'entry', 'entries')} to {message.path}", timeout=8)

    def _summary(self, note: str = "") -> None:
        table = self.table
        shown = len(table.visible_rows())
        text = f"{shown}/{len(table.all_rows)} entries · sort {table.sort_description()} · {len(table.marked)} marked"
        self.query_one("#summary", Static).update(f"{text}  {note}" if note else text)
