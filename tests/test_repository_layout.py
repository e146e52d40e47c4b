"""The repository stays readable: every README a guide of at most 500 lines
(dated logs go to notes/ files beside the part), bench/ holds at most 15
scripts (benchmarks against a peer, another build or a goal; the model's
research is in assign/research/; 15 since netferret's and the searchers'
benchmarks came, guided search's study moving to research/), and every relative link of a Markdown
file leads to a file that exists."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

README_MAX_LINES = 500
BENCH_MAX_SCRIPTS = 15


def tracked(repo: Path, *patterns: str) -> list[Path]:
    out = subprocess.run(["git", "-C", str(repo), "ls-files", "--cached", "--others", "--exclude-standard",
                          *patterns], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip(f"not a git checkout ({out.stderr.strip()}): the file list comes from git")
    return [repo / p for p in out.stdout.splitlines() if (repo / p).is_file()]


def test_every_readme_is_a_guide_of_at_most_500_lines(repo_dir: Path) -> None:
    readmes = tracked(repo_dir, "README.md", "*/README.md")
    assert repo_dir / "README.md" in readmes and repo_dir / "assign" / "README.md" in readmes
    long = {str(p.relative_to(repo_dir)): n for p in readmes
            if (n := len(p.read_text().splitlines())) > README_MAX_LINES}
    assert not long, f"READMEs over {README_MAX_LINES} lines (move dated logs to notes/): {long}"


def test_bench_holds_at_most_15_scripts(repo_dir: Path) -> None:
    scripts = sorted(p.name for p in (repo_dir / "bench").iterdir()
                     if p.is_file() and p.suffix in (".py", ".sh"))
    assert 0 < len(scripts) <= BENCH_MAX_SCRIPTS, scripts


def test_every_relative_markdown_link_leads_somewhere(repo_dir: Path) -> None:
    broken = []
    for md in tracked(repo_dir, "*.md"):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", md.read_text()):
            if "://" not in target and not (md.parent / target).exists():
                broken.append(f"{md.relative_to(repo_dir)}: {target}")
    assert not broken, broken
