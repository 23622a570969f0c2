"""The control routes both e-invoicing platform simulators share (`odp.py`, the spec's operator;
`afnor.py`, an XP Z12-013 platform): the flows taken, the state, the fault switches, the
settings, a reset. A handler mixing this in has a `server.store` with `lock`, `flows_for`,
`snapshot`, `faults`, `settings` and `reset`, and `_json_body()` / `_json(status, data)`."""

from __future__ import annotations


class OperatorControl:
    _query: dict
    server: object

    def control_flows(self) -> None:
        tracking_id = (self._query.get("trackingId") or [None])[0]
        flow_type = (self._query.get("flowType") or [None])[0]
        store = self.server.store
        with store.lock:
            self._json(200, {"flows": store.flows_for(tracking_id, flow_type)})

    def control_get_state(self) -> None:
        store = self.server.store
        with store.lock:
            self._json(200, store.snapshot())

    def control_set_faults(self) -> None:
        store = self.server.store
        body = self._json_body()
        with store.lock:
            store.faults.update(body)
            self._json(200, store.snapshot())

    def control_settings(self) -> None:
        store = self.server.store
        body = self._json_body()
        with store.lock:
            store.settings.update(body)
            self._json(200, store.snapshot())

    def control_reset(self) -> None:
        store = self.server.store
        with store.lock:
            store.reset()
        self._json(200, {"reset": True})
