"""Content types told from the bytes, and technical names."""

import pytest

from backend.errors import ValidationError
from backend.files import detect_content_type
from backend.printing.files import split_extension, technical_name


@pytest.mark.parametrize(
    "head,expected",
    [
        (b"%PDF-1.7\n%", "application/pdf"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "image/png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
        (b"II*\x00\x08\x00\x00\x00", "image/tiff"),
        (b"MM\x00*\x00\x00\x00\x08", "image/tiff"),
        (b"II+\x00\x08\x00\x00\x00", "image/tiff"),
    ],
)
def test_accepted_types_are_recognized_from_their_signature(head, expected):
    assert detect_content_type(head) == expected


@pytest.mark.parametrize(
    "head",
    [b"", b"GIF89a", b"PK\x03\x04", b"<svg xmlns=", b" %PDF-1.7", b"\x89PNG", b"hello world"],
)
def test_anything_else_is_a_validation_error_on_the_file_field(head):
    with pytest.raises(ValidationError) as refused:
        detect_content_type(head)
    assert refused.value.code == "VALIDATION_ERROR" and "file" in refused.value.details["fields"]


@pytest.mark.parametrize(
    "original,content_type,expected",
    [
        ("Affiche Été (v2).PNG", "image/png", "affiche-ete-v2.png"),
        ("C:\\fakepath\\Kakémono 2026.pdf", "application/pdf", "kakemono-2026.pdf"),
        ("dir/sub/../photo.jpeg", "image/jpeg", "photo.jpeg"),
        ("photo.JPG", "image/jpeg", "photo.jpg"),
        ("scan.tiff", "image/tiff", "scan.tiff"),
        ("mislabelled.pdf", "image/png", "mislabelled.png"),
        ("no extension", "application/pdf", "no-extension.pdf"),
        ("....pdf", "application/pdf", "visuel.pdf"),
        ("日本語.pdf", "application/pdf", "visuel.pdf"),
        (".hidden.png", "image/png", "hidden.png"),
        ("a__b--c.pdf", "application/pdf", "a__b--c.pdf"),
        ("x" * 300 + ".pdf", "application/pdf", "x" * 100 + ".pdf"),
    ],
)
def test_technical_names_are_ascii_lower_case_with_the_detected_extension(original, content_type, expected):
    assert technical_name(original, content_type) == expected


def test_split_extension():
    assert split_extension("a-b.pdf") == ("a-b", ".pdf")
    assert split_extension("a.b.tif") == ("a.b", ".tif")
    assert split_extension("plain") == ("plain", "")
    assert split_extension(".pdf") == (".pdf", "")
