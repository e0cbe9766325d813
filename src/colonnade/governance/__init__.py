"""Who calls and what they may do: principals, authorization (and, as they land, identity, policy, audit)."""
