"""Writing a generated table module of assign.evt (one row per shape XI[i],
one cell per sample size K[j], one value per level LEVELS[m])."""
from __future__ import annotations

from pathlib import Path

EVT_DIR = Path(__file__).resolve().parent.parent


def write_table(module: str, docstring: list[str], xi: list, k: list, levels: list, name: str,
                table: list) -> Path:
    """Write assign/evt/<module>.py; `docstring`: its lines, quotes included."""
    lines = docstring + [
        f"XI = {xi}",
        f"K = {k}",
        f"LEVELS = {levels}",
        f"# {name}[i][j][m]: shape XI[i], k = K[j], level LEVELS[m]",
        f"{name} = [",
    ]
    for row in table:
        lines.append("    [")
        lines += [f"        {cell}," for cell in row]
        lines.append("    ],")
    lines.append("]")
    path = EVT_DIR / f"{module}.py"
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}")
    return path
