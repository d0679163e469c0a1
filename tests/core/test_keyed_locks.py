"""KeyedLocks: the lock per server name behind single-flight refreshes (auth.refresh) and logins (auth.flow)."""

from __future__ import annotations

import threading
from typing import List

from mcpsync._threads import KeyedLocks


def test_one_lock_per_key_made_once_and_kept() -> None:
    locks = KeyedLocks(threading.RLock)
    a = locks("a")
    assert locks("a") is a and locks("b") is not a
    with a, a:  # an RLock factory gives re-entrant locks
        pass


def test_threads_racing_for_a_new_key_get_the_one_lock_made() -> None:
    inside, release = threading.Event(), threading.Event()
    made: List[threading.Lock] = []

    def factory() -> threading.Lock:
        lock = threading.Lock()
        made.append(lock)
        inside.set()
        assert release.wait(10)  # hold the first caller at the racy point: the lock is made, not yet kept
        return lock

    locks = KeyedLocks(factory)
    got: List[threading.Lock] = []
    first = threading.Thread(target=lambda: got.append(locks("s")))
    first.start()
    assert inside.wait(10)
    second = threading.Thread(target=lambda: got.append(locks("s")))
    second.start()
    second.join(0.05)  # it waits on the guard, not on a lock of its own
    assert second.is_alive() and len(made) == 1
    release.set()
    first.join(10)
    second.join(10)
    assert len(made) == 1 and got == [made[0], made[0]]
