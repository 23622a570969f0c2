"""Admin-written content cannot reach Python objects, files or the network, nor exhaust memory."""

from __future__ import annotations

import pytest

from backend.documents.catalog import load_catalog
from backend.documents.rendering import html_to_pdf, render_html
from backend.documents.sandbox import render_markdown_source
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


@pytest.mark.parametrize("source", ESCAPES)
def test_sandbox_escape_attempts_fail_with_a_validation_error(source):
    variables = {"organizationName": "ACME", "lines": [1, 2]}
    with pytest.raises(ValidationError) as caught:
        render_markdown_source(source, variables)
    assert caught.value.code == "VALIDATION_ERROR"
    assert "<class" not in caught.value.message and "<function" not in caught.value.message


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
