import io
import json
import logging

import pytest

from backend.logs import JsonFormatter, configure_logging, log_event, redact, register_secrets


@pytest.fixture
def capture():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.addHandler(handler)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    root.removeHandler(handler)


def test_a_line_is_one_json_object_with_the_five_fields(capture):
    from backend.context import bind_request_id, reset_request_id

    token = bind_request_id("req-42")
    try:
        log_event("billing.reservation.collect.paid", "collected", amountCents=1200)
    finally:
        reset_request_id(token)
    line = capture()[-1]
    assert line["scope"] == "billing.reservation.collect.paid"
    assert line["message"] == "collected"
    assert line["level"] == "info"
    assert line["requestId"] == "req-42"
    assert line["timestamp"].endswith("Z") and "T" in line["timestamp"]
    assert line["amountCents"] == 1200


def test_levels_are_named_debug_info_warn_error(capture):
    root = logging.getLogger()
    previous = root.level
    root.setLevel(logging.DEBUG)
    try:
        for level in ("debug", "info", "warn", "error"):
            log_event("t", "x", level=level)
    finally:
        root.setLevel(previous)
    assert [line["level"] for line in capture()] == ["debug", "info", "warn", "error"]


def test_log_level_filters_lower_levels():
    stream = io.StringIO()
    root = logging.getLogger()
    previous = root.level
    try:
        configure_logging("warn", stream=stream)
        log_event("t", "hidden", level="info")
        log_event("t", "debug hidden", level="debug")
        log_event("t", "shown", level="warn")
        lines = [json.loads(x) for x in stream.getvalue().splitlines()]
        assert [line["message"] for line in lines] == ["shown"]
    finally:
        root.setLevel(previous)
        configure_logging("info")


def test_keys_named_like_secrets_are_redacted_at_any_depth(capture):
    log_event(
        "t",
        "payload",
        body={"email": "a@example.com", "password": "hunter22", "nested": [{"sessionToken": "abc"}]},
        headers={"Authorization": "Bearer zzz", "Cookie": "auth.session_token=abc", "X-Api-Key": "k"},
        iban="FR7630006000011234567890189",
        client_secret="s3cr3t",
    )
    line = capture()[-1]
    assert line["body"]["password"] == "[REDACTED]"
    assert line["body"]["nested"][0]["sessionToken"] == "[REDACTED]"
    assert line["body"]["email"] == "a@example.com"
    assert set(line["headers"].values()) == {"[REDACTED]"}
    assert line["iban"] == "[REDACTED]" and line["client_secret"] == "[REDACTED]"


def test_registered_secret_values_are_masked_anywhere(capture):
    register_secrets(["sk_live_veryverysecret"])
    logging.getLogger("t").warning("calling with key sk_live_veryverysecret now")
    log_event("t", "x", note="the key is sk_live_veryverysecret")
    raw = json.dumps(capture())
    assert "sk_live_veryverysecret" not in raw
    assert "[REDACTED]" in raw


def test_long_payloads_are_truncated_to_two_kib(capture):
    log_event("t", "big", payload="é" * 5000)
    value = capture()[-1]["payload"]
    assert len(value.split("...[truncated")[0].encode()) <= 2048
    assert "truncated" in value


def test_redact_leaves_plain_values_alone():
    assert redact({"count": 3, "ok": True, "name": None}) == {"count": 3, "ok": True, "name": None}


def test_a_process_runners_text_handler_gives_way_to_the_json_one():
    # `dramatiq` and `periodiq` call logging.basicConfig before importing our actors: without
    # this, every line of a worker or of the clock would also be written as plain text.
    import sys

    root = logging.getLogger()
    previous = root.level
    text, json_stream = io.StringIO(), io.StringIO()
    runner = logging.StreamHandler(text)
    runner.setFormatter(logging.Formatter("[%(asctime)s] [PID %(process)d] [%(name)s] %(message)s"))
    root.addHandler(runner)
    try:
        configure_logging("info", stream=json_stream)
        log_event("worker", "message processed", messageId="m-1")
    finally:
        root.removeHandler(runner)
        root.setLevel(previous)
        configure_logging("info", stream=sys.__stdout__)
    assert text.getvalue() == ""
    line = json.loads(json_stream.getvalue().splitlines()[-1])
    assert (line["scope"], line["message"], line["messageId"]) == ("worker", "message processed", "m-1")


def test_every_request_writes_one_access_line_with_its_outcome(client, log_lines):
    client.simulate_get("/api/openapi.json", headers={"x-request-id": "trace-me.1"}, params={"secret": "x"})
    client.simulate_get("/api/nowhere", headers={"x-request-id": "trace-me.2"})
    client.simulate_get("/api/health", headers={"x-request-id": "trace-me.3"})
    lines = {line["requestId"]: line for line in log_lines() if line["scope"] == "api.request"}
    assert lines["trace-me.1"]["status"] == 200 and lines["trace-me.1"]["route"] == "/api/openapi.json"
    assert lines["trace-me.2"]["status"] == 404 and lines["trace-me.2"]["method"] == "GET"
    assert lines["trace-me.2"]["route"] is None  # no route matched: the raw path is never written
    assert "secret" not in str(lines) and lines["trace-me.1"]["durationMs"] >= 0
    assert "trace-me.3" not in lines  # liveness probes stay out of the access log


def test_the_default_handler_follows_sys_stdout_and_never_writes_to_a_closed_one(monkeypatch):
    # pytest swaps sys.stdout for its capture and closes that stream afterwards: a handler keeping
    # the stream of its configuration time printed "--- Logging error --- ValueError: I/O operation
    # on closed file" for a server thread's late access-log line.
    import sys

    import backend.logs

    monkeypatch.setattr(backend.logs, "_configured", False)
    first, second = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", first)
    configure_logging("info")
    log_event("t", "one")
    first.close()
    monkeypatch.setattr(sys, "stdout", second)
    monkeypatch.setattr(logging, "raiseExceptions", True)
    errors = io.StringIO()
    monkeypatch.setattr(sys, "stderr", errors)  # where logging reports a handler's failure
    log_event("t", "two")
    assert [json.loads(line)["message"] for line in second.getvalue().splitlines()] == ["two"]
    assert "Logging error" not in errors.getvalue()


def test_the_terminal_format_is_one_short_line_redacted_like_the_json_one():
    from backend.logs import TextFormatter

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(TextFormatter())
    logger = logging.getLogger("outbox")
    logger.addHandler(handler)
    register_secrets(["sk_live_text_format_42"])
    try:
        logging.getLogger("boot").addHandler(handler)
        logging.getLogger("boot").warning("ESIGN_WEBHOOK_SECRET is not set")
        logging.getLogger("boot").removeHandler(handler)
        log_event("outbox", "row given up with key sk_live_text_format_42", level="error", rowId="r-1",
                  apiKey="sk_live_other", settings={"nested": "left to the JSON lines"})
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            logger.exception("sweep failed")
    finally:
        logger.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "vitrine: warning: ESIGN_WEBHOOK_SECRET is not set"
    assert lines[1] == "vitrine: error: row given up with key [REDACTED] (outbox; rowId=r-1 apiKey=[REDACTED])"
    assert lines[2] == "vitrine: error: sweep failed (outbox)"
    assert lines[3] == "Traceback (most recent call last):" and lines[-1] == "RuntimeError: boom"
    assert "sk_live" not in stream.getvalue() and "nested" not in stream.getvalue()
