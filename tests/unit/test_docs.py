"""The repository stands on its own, and its documentation's links lead somewhere.

No tracked file may refer to a path outside the repository (the reference studies are cited
by title, author and address in README.md, "References"), every relative link in README.md
and docs/*.md must reach a tracked file (or folder) and, with ``#anchor``, a heading or
``<a id>`` that exists there, and the sample output README.md shows must begin as the
harness's own summary does.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from burstbench.commands.run import summary

ROOT = Path(__file__).resolve().parents[2]

# Written so that this file does not match itself.
OUTSIDE = re.compile(r"\.\./shared|(?<![\w.-])/wor[k]/")
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)
EXPLICIT_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def tracked() -> list[str]:
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], check=True,
                         capture_output=True).stdout.decode()
    return [p for p in out.split("\0") if p]


def text_of(rel: str) -> str | None:
    try:
        data = (ROOT / rel).read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    h = re.sub(r"<[^>]+>", "", heading).strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    found: set[str] = set(EXPLICIT_ANCHOR.findall(markdown))
    seen: dict[str, int] = {}
    for h in HEADING.findall(FENCE.sub("", markdown)):
        s = slug(h)
        n = seen.get(s, 0)
        found.add(s if n == 0 else f"{s}-{n}")
        seen[s] = n + 1
    return found


def links(markdown: str) -> list[str]:
    prose = CODE_SPAN.sub("", FENCE.sub("", markdown))
    return LINK.findall(prose)


def docs_pages() -> list[str]:
    return ["README.md"] + sorted(p for p in tracked()
                                  if p.startswith("docs/") and p.endswith(".md"))


def test_no_tracked_file_refers_to_a_path_outside_the_repository():
    offenders = []
    for rel in tracked():
        text = text_of(rel)
        if text is None:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{rel}:{n}: {line.strip()[:100]}")
    assert not offenders, "paths outside the repository:\n" + "\n".join(offenders)


def test_the_outside_path_check_catches_what_it_is_for():
    assert OUTSIDE.search("see ../sha" "red/references/README.md")
    assert OUTSIDE.search("python /wor" "k/main/burstbench/cli.py")
    assert not OUTSIDE.search("docs/findings.md and network/wor" "k/ and /workspace")


@pytest.mark.parametrize("page", docs_pages())
def test_every_relative_link_resolves(page):
    files = set(tracked())
    folders = {str(parent) for f in files for parent in Path(f).parents}
    text = text_of(page)
    assert text is not None, page
    broken = []
    for target in links(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        if path:
            resolved = (ROOT / page).parent / path
            try:
                rel = resolved.resolve().relative_to(ROOT).as_posix()
            except ValueError:
                broken.append(f"{target}: outside the repository")
                continue
            if rel not in files and rel not in folders:
                broken.append(f"{target}: no tracked file {rel}")
                continue
        else:
            rel = page
        if anchor:
            target_text = text_of(rel) if rel.endswith(".md") else None
            if target_text is None or anchor not in anchors(target_text):
                broken.append(f"{target}: no anchor #{anchor} in {rel}")
    assert not broken, f"{page}:\n" + "\n".join(broken)


def test_the_link_check_sees_links_and_anchors():
    md = ("# A title\n\nSee [x](docs/a.md#b-c) and ![img](docs/p.png).\n"
          "```\n[not](a/link.md)\n```\n`[nor](this.md)`\n"
          "## B, c\n## B, c\n<a id=\"made-up\"></a>\n")
    assert links(md) == ["docs/a.md#b-c", "docs/p.png"]
    assert {"a-title", "b-c", "b-c-1", "made-up"} <= anchors(md)
    assert slug("Reliability under faults (`./bench chaos all`)") == \
        "reliability-under-faults-bench-chaos-all"


def test_the_readme_sample_output_begins_as_bench_run_prints_it():
    doc = {"point": "point", "status": "ok",
           "parameters": {"producer": ["stomp-py"], "producers": 1, "consumer": ["stomp-py"],
                          "consumers": 2, "count": 20000, "bursts": 3, "size": 6,
                          "queues": 1, "persistence": "none", "persistent": False,
                          "ack": "auto"}}
    head = summary(doc).splitlines()[:2]
    assert head[0] == "point: OK"  # `./bench run`'s one point, not "point point: OK"
    readme = (ROOT / "README.md").read_text()
    assert "\n".join(head) in readme
    assert "point point" not in readme
    named = dict(doc, point="consumers-2")
    assert summary(named).splitlines()[0] == "point consumers-2: OK"
