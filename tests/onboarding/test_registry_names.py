"""Matching a signer against the representatives the company registry lists."""

from __future__ import annotations

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from backend.onboarding.registry import Representative
from backend.onboarding.registry_names import fold, is_representative, legal_names_differ, matching_representative

JEAN_MARC = Representative(first_names="JEAN MARC", last_name="DUPONT", role="Président de SAS")
HELENE = Representative(first_names="HÉLÈNE", last_name="LEFÈVRE-DURAND", role="Gérant")


@pytest.mark.parametrize(("first", "last"), [
    ("Jean Marc", "Dupont"), ("jean-marc", "DUPONT"), ("Marc Jean", "dupont"), ("Jean", "Dupont"),
    ("  Jean   Marc ", " Dupont "), ("Jean\u2011Marc", "Dupont"),  # a non-breaking hyphen
])
def test_a_listed_representative_matches_whatever_the_case_hyphens_spaces_and_given_name_order(first, last):
    assert is_representative(first, last, JEAN_MARC)


@pytest.mark.parametrize(("first", "last"), [
    ("Helene", "Lefevre Durand"), ("HÉLÈNE", "lefèvre-durand"), ("hélène", "Lefevre-Durand"),
    ("Hélène", "Lefèvre Durand"),
])
def test_accents_are_ignored(first, last):
    assert is_representative(first, last, HELENE)


@pytest.mark.parametrize(("first", "last"), [
    ("Marie", "Dupont"),  # a homonym with another given name
    ("Marc", "Dupont"),  # a later given name alone
    ("Jean Marc Paul", "Dupont"),  # a given name the registry does not list
    ("Jean Marc", "Dupond"),
    ("", "Dupont"),
])
def test_another_person_does_not_match(first, last):
    assert not is_representative(first, last, JEAN_MARC)


def test_a_birth_name_in_parentheses_also_matches():
    married = Representative(first_names="CHRISTINE", last_name="DORNIER (MARTIN)", role="Président de SAS")
    assert is_representative("Christine", "Dornier", married)
    assert is_representative("Christine", "Martin", married)
    assert not is_representative("Christine", "Dornier Martin", married)


def test_the_matching_representative_is_the_one_named():
    other = Representative(first_names="PAUL", last_name="DUPONT", role="Directeur général")
    assert matching_representative("Paul", "Dupont", [JEAN_MARC, other]) is other
    assert matching_representative("Pierre", "Dupont", [JEAN_MARC, other]) is None


def test_ligatures_are_spelled_out():
    assert fold("Œuvre d\u2019Ævar") == "oeuvre d aevar"
    assert is_representative("Cœur", "Lœb", Representative("COEUR", "LOEB", None))


def test_legal_names_are_compared_without_legal_forms_and_spelling():
    assert not legal_names_differ("Laiterie Démo SA", "LAITERIE DEMO")
    assert not legal_names_differ("Fromagerie du Lac SAS", "FROMAGERIE DU LAC")
    assert legal_names_differ("Boulangerie Martin SARL", "HYPER DEMO")


names = st.text(alphabet=st.sampled_from("abcdefghéèêëàçôîïüœ -'"), min_size=1, max_size=20).filter(
    lambda s: fold(s))


@seed(33)
@settings(max_examples=60, derandomize=True)
@given(first=names, last=names)
def test_a_representative_always_matches_itself_in_upper_case_and_with_its_given_names_reversed(first, last):
    registered = Representative(first_names=first.upper(), last_name=last.upper(), role=None)
    assert is_representative(first, last, registered)
    assert is_representative(" ".join(reversed(first.split())), last.swapcase(), registered)
    assert fold(fold(first)) == fold(first)
