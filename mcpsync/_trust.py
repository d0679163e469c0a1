"""Whether a private file can be trusted, as ssh decides it: :func:`untrusted_reason`.

A file that another user owns, or that the file's group or everyone may write, may have been written by
someone else: ssh refuses such a key or configuration file, and so do mcpsync's caches and stores. On
Windows there are no POSIX owners and modes (``os.stat`` reports neither), so the check is skipped there;
the user's profile directories are private by their ACLs. Pure function; thread-safe; no I/O of its own.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import Optional

__all__ = ["untrusted_reason"]


def untrusted_reason(st: "os.stat_result") -> Optional[str]:
    """Why a file with this ``stat`` result is not to be trusted, or ``None`` when it is.

    Refused: anything but a regular file; an owner other than the current user (or root); write permission
    for the group or for others. Always ``None`` on Windows (see the module documentation).
    """
    if sys.platform == "win32":
        return None
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    uid = os.getuid()
    if st.st_uid not in (uid, 0):
        return "owned by uid %d, not by this user (uid %d)" % (st.st_uid, uid)
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        who = "others" if st.st_mode & stat.S_IWOTH else "its group"
        return "writable by %s (mode %04o)" % (who, stat.S_IMODE(st.st_mode))
    return None
