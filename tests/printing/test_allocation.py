"""The shared calculation of spec B (`allocation.plan_deposit`): quantities of both deposit modes,
reuse, refusals 1 to 4, stock allocation (automatic and explicit) and its invariant."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.errors import ValidationError
from backend.printing.allocation import (
    DepositedFile,
    Slot,
    SupportMode,
    Zone,
    ZoneTotal,
    plan_deposit,
)

FRONTON = Zone("fronton", "Fronton", 1, True)
JOUES = Zone("joues", "Joues", 2, True)
FACADE = Zone("facade", "Façade", 4, True)
SOCLE = Zone("socle", "Socle", 1, False)
ZONES = [FRONTON, JOUES, FACADE, SOCLE]


def single(files, reuse=()):
    return plan_deposit(ZONES, ["r1"], files, reused_slots=reuse).reservations[0]


def refusal(callable_, *args, **kwargs) -> dict:
    with pytest.raises(ValidationError) as refused:
        callable_(*args, **kwargs)
    return refused.value.details


EVERY_ZONE_SAME_VISUAL = [DepositedFile("fronton", None, "a1"), DepositedFile("joues", None, "a2"),
                          DepositedFile("facade", None, "a3")]


def test_same_visual_gives_one_line_per_zone_with_its_face_quantity():
    plan = single(EVERY_ZONE_SAME_VISUAL)
    assert [(line.zone_id, line.face_index, line.quantity) for line in plan.lines] == [
        ("fronton", None, 1), ("joues", None, 2), ("facade", None, 4)]
    assert [line.position for line in plan.lines] == [0, 1, 2]
    assert plan.printed_panels == 7 and plan.reused == () and plan.support_mode is SupportMode.PRINT


def test_one_visual_per_face_gives_one_line_of_one_per_face():
    files = [DepositedFile("fronton", None, "a1"), DepositedFile("joues", 0, "a2"), DepositedFile("joues", 1, "a3"),
             *[DepositedFile("facade", f, f"f{f}") for f in range(4)]]
    plan = single(files)
    per_face = [line for line in plan.lines if line.face_index is not None]
    assert len(per_face) == 6 and {line.quantity for line in per_face} == {1}
    assert plan.printed_panels == 7


def test_qualifiers_label_positions_and_never_count():
    plan = single(EVERY_ZONE_SAME_VISUAL)
    facade = next(line for line in plan.lines if line.zone_id == "facade")
    assert facade.qualifiers == ("face 1", "face 2", "face 3", "face 4") and facade.quantity == 4
    per_face = single([DepositedFile("fronton", None, "a"), DepositedFile("joues", None, "b"),
                       DepositedFile("facade", 2, "c"), *[DepositedFile("facade", f, "d") for f in (0, 1, 3)]])
    assert next(line for line in per_face.lines if line.face_index == 2).qualifiers == ("face 3",)


def test_reuse_is_a_per_slot_switch_persisted_one_face_at_a_time():
    whole = single(EVERY_ZONE_SAME_VISUAL[:2], reuse=[Slot("facade")])
    per_face = single(EVERY_ZONE_SAME_VISUAL[:2], reuse=[Slot("facade", f) for f in range(4)])
    assert whole.reused == per_face.reused == tuple(Slot("facade", f) for f in range(4))
    assert whole.lines == per_face.lines and whole.support_mode is SupportMode.HYBRID


def test_everything_reused_makes_no_line():
    plan = single([], reuse=[Slot("fronton"), Slot("joues"), Slot("facade")])
    assert plan.lines == () and plan.support_mode is SupportMode.REUSE_ALL and len(plan.reused) == 7


def test_mixed_faces_print_some_and_reuse_the_others():
    plan = single([DepositedFile("fronton", None, "a"), DepositedFile("joues", None, "b"),
                   DepositedFile("facade", 0, "c"), DepositedFile("facade", 3, "c")],
                  reuse=[Slot("facade", 1), Slot("facade", 2)])
    assert plan.printed_panels == 5 and plan.reused == (Slot("facade", 1), Slot("facade", 2))


# --- refusals 1 to 4, each naming the zone or the face -------------------------------------------------


def test_refusal_1_a_zone_outside_the_configuration():
    assert refusal(single, [DepositedFile("toit", None, "a")])["zoneId"] == "toit"
    assert refusal(single, [DepositedFile("socle", None, "a")])["zoneId"] == "socle"  # not printable
    assert refusal(single, EVERY_ZONE_SAME_VISUAL, reuse=[Slot("toit")])["zoneId"] == "toit"


@pytest.mark.parametrize("files", [
    [DepositedFile("joues", 2, "a")],  # past the last face
    [DepositedFile("joues", 0, "a"), DepositedFile("joues", 0, "b")],  # one face twice
    [DepositedFile("joues", None, "a"), DepositedFile("joues", 1, "b")],  # whole zone and a face
])
def test_refusal_2_more_files_than_faces(files):
    details = refusal(single, [DepositedFile("fronton", None, "x"), DepositedFile("facade", None, "y"), *files])
    assert details["zoneId"] == "joues"


@pytest.mark.parametrize("reuse", [
    [Slot("joues", 2)],  # past the last face
    [Slot("joues", 0), Slot("joues", 0)],
    [Slot("joues"), Slot("joues", 1)],
])
def test_refusal_3_a_reuse_above_the_zone_capacity(reuse):
    details = refusal(single, [DepositedFile("fronton", None, "x"), DepositedFile("facade", None, "y")],
                      reuse=reuse)
    assert details["zoneId"] == "joues"


def test_a_face_both_printed_and_reused_is_refused():
    details = refusal(single, EVERY_ZONE_SAME_VISUAL, reuse=[Slot("joues", 0)])
    assert (details["zoneId"], details["faceIndex"]) == ("joues", 0)


def test_refusal_4_a_face_with_neither_file_nor_reuse():
    details = refusal(single, [DepositedFile("fronton", None, "a"), DepositedFile("joues", None, "b"),
                               DepositedFile("facade", 0, "c"), DepositedFile("facade", 1, "c")],
                      reuse=[Slot("facade", 3)])
    assert (details["zoneId"], details["faceIndex"]) == ("facade", 2)
    details = refusal(single, EVERY_ZONE_SAME_VISUAL[:2])
    assert (details["zoneId"], details["faceIndex"]) == ("facade", None)


# --- batches: stock total and allocation ------------------------------------------------------------------

IDS = ["r1", "r2", "r3", "r4"]


def batch(stock=None, allocations=None, ids=IDS):
    return plan_deposit([JOUES], ids, [DepositedFile("joues", None, "a")], stock=stock, allocations=allocations)


def test_stock_is_a_batch_total_taken_by_the_first_reservations():
    plan = batch(stock={"joues": 3})
    assert [p.printed_panels for p in plan.reservations] == [0, 1, 2, 2]
    assert [len(p.reused) for p in plan.reservations] == [2, 1, 0, 0]
    assert plan.with_lines == plan.reservations[1:] and plan.panels_to_print == 5
    assert plan.zones["joues"].printed + plan.zones["joues"].reused == 2 * 4


def test_stock_above_the_population_capacity_is_refused():
    assert refusal(batch, stock={"joues": 9})["capacity"] == 8


def test_a_fully_stocked_zone_needs_no_file():
    plan = plan_deposit([JOUES], IDS, [], stock={"joues": 8})
    assert plan.with_lines == () and plan.panels_to_print == 0


def test_explicit_allocation_is_keyed_by_reservation():
    plan = batch(stock={"joues": 3}, allocations={"joues": {"r1": 2, "r2": 2, "r3": 1, "r4": 0}})
    assert [p.printed_panels for p in plan.reservations] == [2, 2, 1, 0]
    assert [len(p.reused) for p in plan.reservations] == [0, 0, 1, 2]


@pytest.mark.parametrize(("allocation", "key"), [
    ({"r1": 2, "r2": 2, "r3": 1}, "reservationIds"),  # a retained reservation left out
    ({"r1": 3, "r2": 2, "r3": 0, "r4": 0}, "printed"),  # above the cell maximum
    ({"r1": 2, "r2": 2, "r3": 2, "r4": 0}, "expected"),  # totals do not add up
    ({"r1": 2, "r2": 2, "r3": 1, "r4": 0, "r9": 0}, "reservationIds"),  # not retained
])
def test_bad_explicit_allocations_are_refused(allocation, key):
    assert key in refusal(batch, stock={"joues": 3}, allocations={"joues": allocation})


# --- properties --------------------------------------------------------------------------------------------


@st.composite
def batches(draw):
    faces = draw(st.integers(min_value=1, max_value=6))
    population = draw(st.integers(min_value=1, max_value=40))
    stock = draw(st.integers(min_value=0, max_value=faces * population))
    return Zone("z", "Z", faces, True), [f"r{i}" for i in range(population)], stock


@given(batches())
@settings(max_examples=200, deadline=None)
def test_printed_plus_reused_equals_faces_times_population(case):
    zone, ids, stock = case
    plan = plan_deposit([zone], ids, [DepositedFile("z", None, "a")], stock={"z": stock})
    printed = sum(p.printed_panels for p in plan.reservations)
    assert printed == zone.face_quantity * len(ids) - stock  # printablePerMeuble x population - stock
    assert printed + sum(len(p.reused) for p in plan.reservations) == zone.face_quantity * len(ids)
    assert all(0 <= p.printed_panels <= zone.face_quantity for p in plan.reservations)
    assert plan.with_lines == tuple(p for p in plan.reservations if p.printed_panels)


@given(batches())
@settings(max_examples=200, deadline=None)
def test_automatic_allocation_fills_the_first_reservations_first_and_is_deterministic(case):
    zone, ids, stock = case
    first = plan_deposit([zone], ids, [DepositedFile("z", None, "a")], stock={"z": stock})
    again = plan_deposit([zone], ids, [DepositedFile("z", None, "a")], stock={"z": stock})
    assert first == again
    reused = [len(p.reused) for p in first.reservations]
    assert reused == sorted(reused, reverse=True)  # the stock goes to the first ones
    assert sum(1 for r in reused if 0 < r < zone.face_quantity) <= 1  # at most one split furniture


@given(batches(), st.randoms(use_true_random=False))
@settings(max_examples=200, deadline=None)
def test_explicit_allocation_replays_any_valid_split(case, rnd):
    zone, ids, stock = case
    remaining, split = zone.face_quantity * len(ids) - stock, {}
    for reservation_id in rnd.sample(ids, len(ids)):  # a valid split, filled in a random order...
        split[reservation_id] = min(zone.face_quantity, remaining)
        remaining -= split[reservation_id]
    for _ in range(len(ids)):  # ...then panels moved at random between reservations
        giver, taker = rnd.choice(ids), rnd.choice(ids)
        if split[giver] > 0 and split[taker] < zone.face_quantity and giver != taker:
            split[giver], split[taker] = split[giver] - 1, split[taker] + 1
    plan = plan_deposit([zone], ids, [DepositedFile("z", None, "a")], stock={"z": stock}, allocations={"z": split})
    assert {p.reservation_id: p.printed_panels for p in plan.reservations} == split
    assert sum(len(p.reused) for p in plan.reservations) == stock


def test_refusal_messages_count_faces_as_details_face_index_does():
    files = [DepositedFile("fronton", None, "a"), DepositedFile("joues", None, "b"),
             DepositedFile("facade", 0, "c"), DepositedFile("facade", 1, "c")]
    for args, kwargs in (((files,), {"reuse": [Slot("facade", 3)]}),  # faceIndex 2 missing
                         (([*files, DepositedFile("facade", 9, "c")],), {}),  # no faceIndex 9
                         ((files,), {"reuse": [Slot("facade", 2), Slot("facade", 7)]})):  # 7 past the last
        with pytest.raises(ValidationError) as refused:
            single(*args, **kwargs)
        assert f"faceIndex {refused.value.details['faceIndex']}" in refused.value.message


@given(batches())
@settings(max_examples=100, deadline=None)
def test_each_reservation_gets_what_a_deposit_of_its_own_share_gets_and_equal_shares_share_their_lines(case):
    """A batch plans each distinct share once: a reservation's lines and reused faces are those of
    a one-reservation deposit printing its share (next to a zone deposited face by face), and
    reservations printing the same share hold the same (immutable) objects."""
    zone, ids, stock = case
    files = [DepositedFile("z", None, "a"), DepositedFile("joues", 0, "b")]
    zones, reuse = [zone, JOUES], [Slot("joues", 1)]
    plan = plan_deposit(zones, ids, files, reused_slots=reuse, stock={"z": stock})
    shared = {}
    for mine in plan.reservations:
        printed = sum(line.quantity for line in mine.lines if line.zone_id == "z")
        alone = plan_deposit(zones, [mine.reservation_id], files, reused_slots=reuse,
                             stock={"z": zone.face_quantity - printed},
                             allocations={"z": {mine.reservation_id: printed}}).reservations[0]
        assert (mine.lines, mine.reused) == (alone.lines, alone.reused)
        first = shared.setdefault(printed, mine)
        assert mine.lines is first.lines and mine.reused is first.reused
    assert plan.zones["joues"] == ZoneTotal(2 * len(ids), len(ids), len(ids))
