"""A bank file's `MsgId` carries the moment it was made on a 24-hour clock (Paris)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from backend.billing.bank.messages import message_id


def test_a_file_made_at_14_58_paris_says_1458_not_0258():
    made = message_id(datetime(2026, 12, 7, 13, 58, 7, tzinfo=UTC))  # 14:58:07 in Paris (UTC+1)
    assert re.fullmatch(r"20261207145807-[0-9a-f]{12}", made), made
    assert message_id(datetime(2026, 7, 1, 0, 5, tzinfo=UTC)).startswith("20260701020500-")  # summer time
    assert made != message_id(datetime(2026, 12, 7, 13, 58, 7, tzinfo=UTC))  # unique
