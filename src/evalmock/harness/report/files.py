"""A report file: Markdown or HTML, chosen by the file's suffix, written whole, redacted and with
every control character from the service escaped."""

from __future__ import annotations

from pathlib import Path

from evalmock.contract.client_verdict import ClientVerdict
from evalmock.harness.excerpts import printable
from evalmock.harness.report.html import render_html, render_unfinished_html
from evalmock.harness.report.markdown import render_markdown, render_unfinished_markdown
from evalmock.harness.report.run_info import RunInfo
from evalmock.harness.results.audit_results import Results
from evalmock.harness.secrets.redactor import Redactor
from evalmock.whole_file import write_whole

REPORT_FORMATS = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}


def report_format(path: str | Path) -> str | None:
    """`markdown` or `html` from the report file's suffix; None for any other suffix."""
    return REPORT_FORMATS.get(Path(path).suffix.lower())


def write_report(
    results: Results,
    path: str | Path,
    *,
    base_url: str,
    redactor: Redactor,
    run: RunInfo | None = None,
    client: ClientVerdict | None = None,
) -> None:
    """A Markdown report (`.md`) or an HTML one (`.html`/`.htm`), chosen by the file's suffix; `run`
    is the run's metadata for the header (by default: now, against `base_url`); `client` the
    client rules' verdict, when the traffic's client was judged too."""
    path = Path(path)
    render = render_html if report_format(path) == "html" else render_markdown
    text = render(results, base_url=base_url, run=run, client=client)
    write_whole(path, printable(redactor.text(text), lines=True))


def write_unfinished_report(crash: str, path: str | Path, redactor: Redactor) -> None:
    """The report of an audit that an internal error stopped, in the format of the file's suffix:
    that it did not finish, and `crash`, the line that says where."""
    render = render_unfinished_html if report_format(path) == "html" else render_unfinished_markdown
    write_whole(Path(path), printable(redactor.text(render(crash)), lines=True))
