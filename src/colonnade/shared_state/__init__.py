"""What replicas share beyond the database: a Redis link, change fan-out, shared values.

Each shared concern has one interface with two implementations, chosen at start-up: in-process
(the embedded default, one replica) and Redis (`shared_state.redis_url`). When Redis is
unreachable the Redis implementations say so (`SharedStateUnavailable`) and their users fall back
to what one process knows; `SharedState.status()` reports the degraded mode.
"""

from colonnade.shared_state.fanout import Change, ChangeHandler, Fanout
from colonnade.shared_state.hub import SharedState
from colonnade.shared_state.link import RedisLink, SharedStateUnavailable
from colonnade.shared_state.values import SharedValues

__all__ = [
    "Change",
    "ChangeHandler",
    "Fanout",
    "RedisLink",
    "SharedState",
    "SharedStateUnavailable",
    "SharedValues",
]
