"""Admin-written content cannot reach Python objects, files or the network, nor exhaust memory
(every way a template builds text is bounded, constructs that recurse are refused)."""

from __future__ import annotations

import pytest

from backend.documents import sandbox
from backend.documents.catalog import load_catalog
from backend.documents.rendering import html_to_pdf, render_html
from backend.documents.sandbox import check_template, render_markdown_source
from backend.errors import ValidationError
from tests.documents.conftest import pdf_pages

ESCAPES = [
    "{{ ''.__class__ }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{% for c in [].__class__.__base__.__subclasses__() %}{{ c }}{% endfor %}",
    "{{ organizationName.__class__.__init__.__globals__ }}",
    "{{ lipsum.__globals__['os'].popen('id').read() }}",
    "{{ cycler.__init__.__globals__.os.environ }}",
    "{{ self.__init__.__globals__.__builtins__ }}",
    "{{ namespace.__init__.__globals__ }}",
    "{{ organizationName|attr('__class__') }}",
    "{{ organizationName.format_map.__self__.__class__ }}",
    "{% set x = lines.append(1) %}{{ lines }}",
    "{{ 'a' * 100000000 }}",
    "{{ 9 ** 999999 }}",
    "{{ range(100000000)|list }}",
    "{% include '/etc/passwd' %}",
    "{% import 'os' as os %}",
]


# Each would allocate hundreds of megabytes (or recurse without end) in an unbounded sandbox.
BIG = "{% set s = 'a' * 100000 %}"
EXHAUSTION = [
    "{{ organizationName.ljust(300000000) }}",
    "{{ organizationName|center(300000000) }}",
    "{{ '{:>300000000}'.format(1) }}",
    "{{ '%300000000d' % 1 }}",
    "{{ (1).to_bytes(300000000, 'big') }}",
    "{{ organizationName|batch(300000000, 'x')|list }}",
    "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
    "{% macro f(s) %}{{ f(s ~ s) }}{% endmacro %}{{ f('ab') }}",
    "{% for x in lines recursive %}{{ loop(lines) }}{% endfor %}",
    "{% set x %}{% for a in lines %}{{ a }}{% endfor %}{% endset %}{{ x }}",
    BIG + "{{ s|replace('', s) }}",
    BIG + "{{ s|join(s) }}",
    BIG + "{{ s.replace('', s) }}",
    BIG + "".join("{% set s = s ~ s %}" for _ in range(12)) + "{{ s|length }}",
    BIG + "".join("{% set s = s + s %}" for _ in range(12)) + "{{ s|length }}",
    BIG + "{{ ([s] * 100000)|upper }}",
    BIG + "{{ [s] * 100000 }}",
    BIG + "{% for a in s %}{% for b in s %}{{ s }}{% endfor %}{% endfor %}",
    "{% set n = 10 ** 60 %}" + "".join("{% set n = n * n %}" for _ in range(12)) + "{{ n }}",
]


@pytest.mark.parametrize("source", ESCAPES + EXHAUSTION)
def test_sandbox_escape_attempts_fail_with_a_validation_error(source):
    variables = {"organizationName": "ACME", "lines": [1, 2]}
    with pytest.raises(ValidationError) as caught:
        render_markdown_source(source, variables)
    assert caught.value.code == "VALIDATION_ERROR"
    assert "<class" not in caught.value.message and "<function" not in caught.value.message


@pytest.mark.parametrize("source", ["{% macro m() %}x{% endmacro %}", "{{ organizationName|center(80) }}",
                                    "{% for x in lines recursive %}{% endfor %}"])
def test_refused_constructs_are_refused_when_the_draft_is_saved(source):
    with pytest.raises(ValidationError, match=r"not allowed|No filter named"):
        check_template(source, declared=["organizationName", "lines"])


def test_what_documents_need_still_works():
    source = ("{% for line in lines %}{{ loop.index }}. {{ line.label|upper }} {{ line.amountCents|euros }}"
              "{{ loop.cycle(' ;', '') }}\n{% endfor %}"
              "{{ lines|join(' / ', attribute='label') }} {{ total }} {{ total|euros }} {{ '%d' % total }} "
              "{{ 'a-b'|replace('-', ' ') }} {{ (lines|map(attribute='amountCents')|sum)|euros }} "
              "{{ organizationName ~ ' SA' }} {{ organizationName.split('C')|length }}")
    lines = [{"label": "Pose", "amountCents": 120_000}, {"label": "Dépose", "amountCents": 5}]
    text, _ = render_markdown_source(source, {"lines": lines, "total": 5_000_000_000, "organizationName": "ACME"})
    # Printed values are markdown-escaped (backslashes) and use French spaces.
    flat = " ".join(text.replace("\\", "").replace("\u202f", " ").replace("\xa0", " ").split())
    assert "1. POSE 1 200,00 € ;" in flat and "2. DÉPOSE 0,05 €" in flat
    assert "Pose / Dépose 5 000 000 000 50 000 000,00 € 5000000000 a b 1 200,05 € ACME SA 2" in flat


def test_a_content_is_parsed_once_and_a_refused_one_every_time(monkeypatch):
    # Each PDF of a published version checked its syntax again (2-3 ms of every invoice PDF).
    parsed, parse = [], sandbox._parse
    monkeypatch.setattr(sandbox, "_parse", lambda source: parsed.append(source) or parse(source))
    content = "Parsed once for {{ organizationName }} (cache test)"
    first = [render_markdown_source(content, {"organizationName": name})[0] for name in ("ACME", "Bolt")]
    assert first == ["Parsed once for ACME (cache test)", "Parsed once for Bolt (cache test)"] and len(parsed) == 1
    for _ in range(2):
        with pytest.raises(ValidationError, match="syntax error"):
            render_markdown_source("{{ never closed (cache test)", {})
    assert len(parsed) == 3


def test_external_resources_are_never_fetched(tmp_path):
    secret = tmp_path / "secret.css"
    secret.write_text("body::after { content: 'SECRET-FILE-CONTENT'; }")
    html = (f'<html><head><link rel="stylesheet" href="file://{secret}"></head>'
            f'<body><p>ok</p><img src="file://{secret}"><img src="http://127.0.0.1:9/x.png"></body></html>')
    (page,) = pdf_pages(html_to_pdf(html))
    assert "ok" in page and "SECRET-FILE-CONTENT" not in page


def test_admin_style_cannot_import_local_files(tmp_path):
    secret = tmp_path / "secret.css"
    secret.write_text("main::before { content: 'SECRET-FILE-CONTENT'; }")
    entry = load_catalog()["cgu_acceptance"]
    style = f'@import url("file://{secret}"); main {{ background: url("file:///etc/hostname"); }}'
    html = render_html(entry, entry.default_content(), style, entry.sample_context())
    assert "SECRET-FILE-CONTENT" not in " ".join(pdf_pages(html_to_pdf(html)))


def test_markdown_raw_html_is_escaped():
    entry = load_catalog()["cgu_acceptance"]
    html = render_html(entry, "<script>alert(1)</script>\n\n<img src='file:///etc/passwd'>\n", "",
                       entry.sample_context())
    assert "<script>" not in html and "<img" not in html
