"""HTTP simulators of the external providers, for development (`vitrine dev`) and tests.

They speak the providers' APIs closely enough that the real clients run against them end to end,
failures included (fault switches), and they keep their state in memory.
"""
