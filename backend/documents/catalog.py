"""The template catalog: versioned JSON files in `entries/`, checked once at start.

Each file declares one template (`templateKey`, `title`, `description`, `category`, typed
`variables`, `isRequiredForKyb`, `renderContext`); its default markdown content is
`defaults/<templateKey>.md`, seeded as the first published version. A malformed file stops boot
(`CatalogError` is a `ConfigError`): a bad key pattern, an unknown variable type, an example of
the wrong type, or a default content that does not parse or uses an undeclared variable.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from backend.config import ConfigError
from backend.documents.formatting import type_problem
from backend.documents.sandbox import FRAME_KEYS, check_template
from backend.errors import NotFound

ENTRIES_DIR = Path(__file__).parent / "entries"
DEFAULTS_DIR = Path(__file__).parent / "defaults"

KEY_PATTERN = re.compile(r"^[a-z0-9_]+$")
VARIABLE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
VARIABLE_TYPES = ("string", "number", "boolean", "date", "currency", "array", "object")

# The PDF style is a template of its own kind (`pdf_css`) under this key, outside the catalog.
PDF_STYLE_KEY = "pdf_style"
PDF_STYLE_TITLE = "Style PDF"


class CatalogError(ConfigError):
    """A catalog file the platform refuses to start with."""


@dataclass(frozen=True)
class CatalogVariable:
    name: str
    type: str
    label: str
    required: bool
    example: object
    description: str | None = None

    def describe(self) -> dict:
        out = {"name": self.name, "type": self.type, "label": self.label, "required": self.required,
               "example": self.example}
        if self.description:
            out["description"] = self.description
        return out


@dataclass(frozen=True)
class CatalogEntry:
    template_key: str
    title: str
    description: str | None
    category: str
    variables: tuple[CatalogVariable, ...]
    is_required_for_kyb: bool
    render_context: str
    catalog_version: str

    def describe(self) -> dict:
        return {
            "templateKey": self.template_key,
            "title": self.title,
            "description": self.description,
            "category": self.category,
            "variables": self.variables_snapshot(),
            "isRequiredForKyb": self.is_required_for_kyb,
            "renderContext": self.render_context,
            "catalogVersion": self.catalog_version,
        }

    def variables_snapshot(self) -> list[dict]:
        return [v.describe() for v in self.variables]

    def sample_context(self) -> dict:
        """The declared examples: the test context of previews and benchmarks."""
        return {v.name: v.example for v in self.variables}

    def default_content(self) -> str:
        return (DEFAULTS_DIR / f"{self.template_key}.md").read_text(encoding="utf-8")


def default_style() -> str:
    return (DEFAULTS_DIR / "pdf_style.css").read_text(encoding="utf-8")


@cache
def load_catalog() -> dict[str, CatalogEntry]:
    """Every catalog entry by key, checked; CatalogError names the file and the problem."""
    entries: dict[str, CatalogEntry] = {}
    for path in sorted(ENTRIES_DIR.glob("*.json")):
        entry = _parse_file(path)
        if entry.template_key in entries:
            raise CatalogError(f"{path.name}: templateKey {entry.template_key!r} is declared twice")
        entries[entry.template_key] = entry
    if not entries:
        raise CatalogError(f"no template declared in {ENTRIES_DIR}")
    for entry in entries.values():
        try:
            check_template(entry.default_content(), declared=[v.name for v in entry.variables])
        except Exception as exc:
            raise CatalogError(f"defaults/{entry.template_key}.md: {getattr(exc, 'message', exc)}") from None
    return entries


def catalog_entry(template_key: str) -> CatalogEntry:
    entry = load_catalog().get(template_key)
    if entry is None:
        raise NotFound(f"unknown document template {template_key!r}")
    return entry


def _parse_file(path: Path) -> CatalogEntry:
    def fail(problem: str) -> CatalogError:
        return CatalogError(f"document template catalog {path.name}: {problem}")

    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise fail(f"not valid JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise fail("must be a JSON object")
    key = raw.get("templateKey")
    if not isinstance(key, str) or not KEY_PATTERN.match(key):
        raise fail(f"templateKey {key!r} must match [a-z0-9_]+")
    if key == PDF_STYLE_KEY:
        raise fail(f"templateKey {key!r} is reserved for the PDF style")
    if path.stem != key:
        raise fail(f"the file must be named {key}.json")
    for name in ("title", "category", "renderContext", "catalogVersion"):
        if not isinstance(raw.get(name), str) or not raw[name].strip():
            raise fail(f"{name} must be a non-empty string")
    if not isinstance(raw.get("description", ""), str):
        raise fail("description must be a string")
    if not isinstance(raw.get("isRequiredForKyb", False), bool):
        raise fail("isRequiredForKyb must be true or false")
    if not (DEFAULTS_DIR / f"{key}.md").is_file():
        raise fail(f"default content defaults/{key}.md is missing")
    variables = raw.get("variables")
    if not isinstance(variables, list):
        raise fail("variables must be an array")
    parsed = tuple(_parse_variable(item, fail) for item in variables)
    names = [v.name for v in parsed]
    duplicates = sorted({n for n in names if names.count(n) > 1} | (set(names) & set(FRAME_KEYS)))
    if duplicates:
        raise fail(f"variable names declared twice or reserved by the frame: {', '.join(duplicates)}")
    return CatalogEntry(
        template_key=key,
        title=raw["title"].strip(),
        description=raw.get("description") or None,
        category=raw["category"].strip(),
        variables=parsed,
        is_required_for_kyb=raw.get("isRequiredForKyb", False),
        render_context=raw["renderContext"].strip(),
        catalog_version=raw["catalogVersion"].strip(),
    )


def _parse_variable(item: object, fail) -> CatalogVariable:
    if not isinstance(item, dict):
        raise fail("each variable must be an object")
    name = item.get("name")
    if not isinstance(name, str) or not VARIABLE_NAME.match(name):
        raise fail(f"variable name {name!r} must match [A-Za-z][A-Za-z0-9_]*")
    kind = item.get("type")
    if kind not in VARIABLE_TYPES:
        raise fail(f"variable {name}: unknown type {kind!r} (one of {', '.join(VARIABLE_TYPES)})")
    if not isinstance(item.get("label"), str) or not item["label"].strip():
        raise fail(f"variable {name}: label must be a non-empty string")
    required = item.get("required", True)
    if not isinstance(required, bool):
        raise fail(f"variable {name}: required must be true or false")
    if "example" not in item:
        raise fail(f"variable {name}: an example is required (it is the preview's test value)")
    problem = type_problem(kind, item["example"])
    if problem:
        raise fail(f"variable {name}: example {problem}")
    return CatalogVariable(
        name=name, type=kind, label=item["label"].strip(), required=required, example=item["example"],
        description=item.get("description"),
    )
