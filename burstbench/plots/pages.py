"""The Jinja2 templates of burstbench's pages (``burstbench/plots/templates/*.j2``): the report, the
one HTML table, and a study's blocks (headings, paragraphs, tables, lists) as HTML or Markdown."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

TEMPLATES = Path(__file__).parent / "templates"


@cache
def environment() -> jinja2.Environment:
    """The templates' environment: HTML templates (``*.html.j2``) escape every value."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                              autoescape=jinja2.select_autoescape(["html.j2"]),
                              undefined=jinja2.StrictUndefined)


def render_blocks(items: list[dict], fmt: str) -> str:
    """Blocks, each ``{"type": "heading", "level", "text"}``, ``{"type": "para", "text"}``,
    ``{"type": "table", "head", "rows"}`` or ``{"type": "list", "title", "items"}``, as
    ``md`` (Markdown) or ``html`` (a fragment)."""
    return environment().get_template(f"blocks.{fmt}.j2").render(items=items)
