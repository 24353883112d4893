"""The ratios of one run as a PNG: every row against quiet Prism (1.00), the bare-Starlette ceiling
beside; one panel for throughput, one for requests served per CPU second.

matplotlib is a benchmark-only dependency (`pip install matplotlib`); without it no chart is drawn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# (section, workload or None, label in the run, label on the chart)
ROWS = (
    ("throughput", None, "evalmock", "25 generated cases"),
    ("throughput", None, "evalmock-same-body", "Prefer: example=page"),
    ("mixed", "test-set", "evalmock", "test-set walks"),
    ("mixed", "gradient", "evalmock", "DigitalOcean test cases"),
)
SERVERS = (("", "Granian (the default)", "#1f77b4"), ("-uvicorn", "uvicorn", "#ff7f0e"))
CEILINGS = (
    ("bare-starlette", "bare Starlette, Granian", "#9ecae1"),
    ("bare-starlette-uvicorn", "bare Starlette, uvicorn", "#fdd0a2"),
)


PANELS = (
    ("x_prism_quiet", "throughput × quiet Prism"),
    ("cpu_x_prism_quiet", "requests per CPU second × quiet Prism"),
)


def _ratio(
    results: dict[str, Any], section: str, workload: str | None, label: str, key: str
) -> float | None:
    data = results.get(section, {})
    if workload is not None:
        data = data.get(workload, {})
    return data.get(key, {}).get(label)


def write(results: dict[str, Any], facts: dict[str, Any], path: Path) -> Path | None:
    """Draw the chart to `path` and return it; None when matplotlib is missing or the run has no
    ratios."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    panels = [(key, title, *_bars(results, key)) for key, title in PANELS]
    panels = [panel for panel in panels if panel[2]]
    if not panels:
        return None
    figure, axes_row = plt.subplots(
        1, len(panels), figsize=(8 * len(panels), 4.8), dpi=100, squeeze=False
    )
    for axes, (_, title, names, bars, ceilings) in zip(axes_row[0], panels, strict=True):
        _draw(axes, title, names, bars, ceilings)
    # The interpreter's build moves evalmock's bars by a fifth and Prism's not at all, so the chart
    # names it.
    python = facts.get("python_build", facts.get("python", "")).split(" [")[0]
    calibration = (
        f", calibration {facts['python_calibration_ms']} ms"
        if "python_calibration_ms" in facts
        else ""
    )
    figure.suptitle(
        f"evalmock serve against Prism, one core each, wrk -c32, medians of the rounds "
        f"({facts.get('date', '')}, shared machine; Python {python}{calibration})",
        fontsize=10,
    )
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)
    return path


def _bars(
    results: dict[str, Any], key: str
) -> tuple[list[str], dict[str, list[float]], dict[str, float | None]]:
    names: list[str] = []
    bars: dict[str, list[float]] = {name: [] for _, name, _ in SERVERS}
    for section, workload, label, shown in ROWS:
        values = {
            name: _ratio(
                results, section, workload, label.replace("evalmock", "evalmock" + suffix), key
            )
            for suffix, name, _ in SERVERS
        }
        if any(v is not None for v in values.values()):
            names.append(shown)
            for name, value in values.items():
                bars[name].append(value or 0.0)
    ceilings = {
        name: _ratio(results, "throughput", None, label, key) for label, name, _ in CEILINGS
    }
    return names, bars, ceilings


def _draw(
    axes: Any,
    title: str,
    names: list[str],
    bars: dict[str, list[float]],
    ceilings: dict[str, float | None],
) -> None:
    width = 0.8 / (len(SERVERS) + 1)
    for index, (_, name, colour) in enumerate(SERVERS):
        xs = [i + index * width for i in range(len(names))]
        drawn = axes.bar(xs, bars[name], width, label=name, color=colour)
        axes.bar_label(drawn, fmt="%.2f×", fontsize=8)
    for (_, name, colour), value in zip(CEILINGS, ceilings.values(), strict=True):
        if value:
            axes.axhline(
                value, color=colour, linestyle="--", linewidth=1.5, label=f"{name}: {value:.2f}×"
            )
    axes.axhline(1.0, color="black", linewidth=1, label="Prism static, quiet: 1.00×")
    axes.set_xticks(
        [i + width * (len(SERVERS) - 1) / 2 for i in range(len(names))], names, fontsize=8
    )
    axes.set_title(title, fontsize=10)
    axes.legend(fontsize=7, loc="upper left")
    top = max(
        [
            *(v for values in bars.values() for v in values),
            *(v or 0 for v in ceilings.values()),
            1.0,
        ]
    )
    axes.set_ylim(0, top * 1.15)


def from_results(folder: Path) -> Path | None:
    """Draw `folder`/ratios.png from the section files a run left there (throughput.json,
    mixed.json)."""
    import json

    results: dict[str, Any] = {}
    facts: dict[str, Any] = {}
    for section in ("throughput", "mixed"):
        path = folder / f"{section}.json"
        if path.exists():
            data = json.loads(path.read_text())
            results[section], facts = data[section], data.get("machine", facts)
    return write(results, facts, folder / "ratios.png")


# python bench/chart.py [RESULTS_FOLDER], with an interpreter that has matplotlib
if __name__ == "__main__":
    import sys

    drawn = from_results(
        Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "results"
    )
    print(drawn or "no chart: matplotlib is not installed, or the folder holds no ratios")
    sys.exit(0 if drawn else 1)
