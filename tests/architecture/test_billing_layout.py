"""Billing keeps its cut (docs/development.md "Map"): a module named for a sub-area's concept sits
in that sub-area's package, in every layer that has one."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The words that name each sub-area's concepts; a module whose name holds one belongs there.
SUB_AREAS = {
    "self_billing": ("self_bill", "mandate_", "incident", "business_day", "scheduler"),
    "documents": ("snapshot", "cii", "facturx", "pdf", "render"),
    "accounting": ("ledger", "journal", "accounting", "books"),
    "bank": ("bank", "direct_debit", "statement", "camt", "pain"),
    "collection": ("auto_collect", "collect_again", "retry_pass"),
    "invoicing": ("numbering", "post_invoice", "parties"),
}
LAYERS = ("backend/billing", "api/billing", "schemas/billing", "tests/billing")


def misplaced(layer: Path) -> list[str]:
    """`<module> belongs in <sub-area>/` for each module of `layer` outside its sub-area."""
    found = []
    for path in sorted(layer.rglob("*.py")):
        relative = path.relative_to(layer)
        name = path.stem.removeprefix("test_")
        for area, words in SUB_AREAS.items():
            if any(word in name for word in words) and relative.parts[0] != area:
                found.append(f"{layer.name}/{relative} belongs in {area}/")
    return found


def test_every_billing_module_sits_in_its_sub_area():
    assert [problem for layer in LAYERS for problem in misplaced(ROOT / layer)] == []


def test_the_check_sees_a_misplaced_module(tmp_path):
    layer = tmp_path / "billing"
    (layer / "documents").mkdir(parents=True)
    for name in ("collection.py", "documents/cii.py", "ledger.py", "numbering.py", "self_billing_mandate.py"):
        (layer / name).write_text("")
    assert [problem.rsplit(" ", 1)[-1] for problem in misplaced(layer)] == ["accounting/", "invoicing/",
                                                                            "self_billing/"]

