"""Identity and access: accounts, sessions, roles and permissions, organizations, KYB status."""
