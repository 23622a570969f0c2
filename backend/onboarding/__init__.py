"""Onboarding: the e-signature envelope of an organization, its provider and its webhook events."""
