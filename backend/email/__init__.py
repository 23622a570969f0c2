"""Outgoing e-mail: messages queued through the outbox and delivered by the `deliver_email` actor."""
