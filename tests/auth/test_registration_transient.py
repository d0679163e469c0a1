"""Issue 18 defect 6c: a passing failure of the registration endpoint is retryable, never "register by hand".

The local authorization server (tests/peers/authserver.py) answers dynamic client registration with a
5xx or 429 a given number of times, then recovers; a refusal (4xx) stays NeedsClientRegistration.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from mcpsync.errors import AuthError, NeedsClientRegistration, RegistrationUnavailable
from tests.peers.authserver import AuthTestServer, make_manager, no_auth_leaks, store  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_auth_leaks")


class FlakyRegistrationServer(AuthTestServer):
    """Answers the next ``failures`` registrations with ``status`` (and ``headers``), then registers normally."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.failures: List[Tuple[int, Dict[str, str]]] = []
        self.registrations = 0

    def register(self, body: Any) -> Tuple[int, Dict[str, str], bytes]:
        with self.lock:
            failure: Optional[Tuple[int, Dict[str, str]]] = self.failures.pop(0) if self.failures else None
            self.registrations += 1
        if failure is not None:
            status, headers = failure
            return self.json(status, {"error": "temporarily_unavailable"}, headers)
        return super().register(body)


@pytest.fixture
def flaky() -> Iterator[FlakyRegistrationServer]:
    with FlakyRegistrationServer() as server:
        yield server


@pytest.mark.parametrize("status", [500, 502, 503, 504, 429])
def test_a_transient_registration_failure_is_retryable_and_the_next_attempt_registers(
    flaky: FlakyRegistrationServer, make_manager: Any, status: int
) -> None:
    flaky.failures.append((status, {"Retry-After": "7"}))
    manager = make_manager()
    manager.add_server("srv", flaky.server_url)
    with pytest.raises(RegistrationUnavailable) as info:
        manager.authenticate("srv")
    err = info.value
    assert not isinstance(err, NeedsClientRegistration) and isinstance(err, AuthError)
    assert err.retryable and err.status_code == status and err.retry_after == 7.0
    assert "try again later" in str(err) and "by hand" in str(err)  # says it is retryable, and no manual step
    assert err.server == "srv"
    assert flaky.requests_to("/authorize") == []
    manager.authenticate("srv")  # the server recovered: the same call now registers and logs in
    assert flaky.registrations == 2
    assert manager.get_auth_status("srv") == "authenticated"


def test_a_refused_registration_still_needs_a_client_registered_by_hand(
    flaky: FlakyRegistrationServer, make_manager: Any
) -> None:
    flaky.failures.append((400, {}))
    manager = make_manager()
    manager.add_server("srv", flaky.server_url)
    with pytest.raises(NeedsClientRegistration) as info:
        manager.authenticate("srv")
    assert info.value.redirect_uri == manager.redirect_uri


def test_an_unreachable_registration_endpoint_is_retryable(flaky: FlakyRegistrationServer, make_manager: Any) -> None:
    from tests.peers.authserver import free_port

    flaky.metadata["registration_endpoint"] = "http://127.0.0.1:%d/register" % free_port()  # nothing listens
    manager = make_manager()
    manager.add_server("srv", flaky.server_url)
    with pytest.raises(RegistrationUnavailable) as info:
        manager.authenticate("srv")
    assert info.value.retryable and info.value.status_code is None
