"""mcpsync._redis: the one opener of the Redis stores (credentials, seen tokens) and the location they show."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from mcpsync._redis import open_redis, redis_location
from mcpsync.errors import ConfigError


class _Pool:
    def __init__(self, kwargs: Dict[str, Any]) -> None:
        self.connection_kwargs = kwargs


class _Client:
    def __init__(self, **kwargs: Any) -> None:
        self.connection_pool = _Pool(kwargs)


def test_the_location_never_shows_the_password_user_or_query() -> None:
    assert redis_location("p", "redis://user:s3cret@cache.local:6380/2?ssl_cert_reqs=none") == (
        "redis://cache.local:6380/2#p"
    )
    assert redis_location("p", "rediss://:pw@[::1]/") == "rediss://[::1]:6379/#p"
    assert redis_location("p", "redis://host:notaport") == "redis://host:6379/0#p"
    assert redis_location("p", "unix:///run/redis.sock?password=pw") == "unix:///run/redis.sock#p"
    assert redis_location("p", client=_Client(host="h", port=1, db=3, password="pw")) == "redis://h:1/3#p"
    assert redis_location("p", client=_Client(path="/run/r.sock")) == "unix:///run/r.sock#p"
    assert redis_location("p", client=object()) == "redis://?:?/0#p"


def test_open_redis_refuses_what_cannot_make_a_store() -> None:
    pytest.importorskip("redis")
    with pytest.raises(ConfigError, match="exactly one"):
        open_redis("S", "the s store", None, None, "p", 1.0)
    with pytest.raises(ConfigError, match="exactly one"):
        open_redis("S", "the s store", "redis://h", _Client(), "p", 1.0)
    with pytest.raises(ConfigError, match="prefix"):
        open_redis("S", "the s store", "redis://h", None, "", 1.0)
    with pytest.raises(ConfigError, match="invalid Redis URL for the s store") as caught:
        open_redis("S", "the s store", "nosuch://:pw@h", None, "p", 1.0)
    assert "pw" not in str(caught.value)
    module, client, location = open_redis("S", "the s store", "redis://:pw@h:7/1", None, "p", 1.0)
    assert isinstance(client, module.Redis) and location == "redis://h:7/1#p"
    given = _Client(host="h")
    assert open_redis("S", "the s store", None, given, "p", 1.0)[1:] == (given, "redis://h:?/0#p")
