"""langgraph-checkpoint-django's DjangoSaver on SQLite, a new database file
per call.

Django is configured here (settings.configure with the saver's app and a
SQLite default database). DjangoSaver has no database argument: it uses
Django's models, so its storage is whatever database Django routes them to.
To give each call its own file, every call adds a database alias (a copy of
a migrated template file) and the saver this factory returns is a subclass
whose public methods only name that alias for Django's router on the
calling thread, call DjangoSaver's own method, and close the thread's
connection afterwards. Nothing else of DjangoSaver is replaced.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._storage import storage_name

_local = threading.local()
_setup_lock = threading.Lock()
_template: str | None = None


class _Router:
    """Sends every query of the calling thread to the alias it names."""

    def db_for_read(self, model: Any, **hints: Any) -> str | None:
        return getattr(_local, "alias", None)

    def db_for_write(self, model: Any, **hints: Any) -> str | None:
        return getattr(_local, "alias", None)


def _configure() -> str:
    """Configures Django once and returns the migrated template file."""
    global _template
    with _setup_lock:
        if _template is not None:
            return _template
        import django
        from django.conf import settings
        from django.core.management import call_command

        d = tempfile.mkdtemp(prefix="eco-django-template-")
        path = os.path.join(d, "template.sqlite3")
        settings.configure(
            INSTALLED_APPS=["langgraph.checkpoint.django.checkpoint"],
            # IMMEDIATE: Django's advice for SQLite under concurrent writers
            # (Django 5.1+); with the default DEFERRED, two transactions that
            # read before writing deadlock into "database is locked".
            DATABASES={
                "default": {
                    "ENGINE": "django.db.backends.sqlite3",
                    "NAME": path,
                    "OPTIONS": {"transaction_mode": "IMMEDIATE"},
                }
            },
            DATABASE_ROUTERS=[_Router()],
            USE_TZ=True,
        )
        django.setup()
        call_command("migrate", verbosity=0, interactive=False)
        from django.db import connections

        connections["default"].close()
        _template = path
        return path


@contextmanager
def _use(alias: str) -> Iterator[None]:
    from django.db import connections

    prev = getattr(_local, "alias", None)
    _local.alias = alias
    try:
        yield
    finally:
        connections[alias].close()
        _local.alias = prev


def _saver_class() -> type:
    from langgraph.checkpoint.django.saver import DjangoSaver

    class RoutedDjangoSaver(DjangoSaver):
        """DjangoSaver with its queries routed to one database alias."""

        alias: str

        def get_tuple(self, config: Any) -> Any:
            with _use(self.alias):
                return super().get_tuple(config)

        def list(self, config: Any, **kwargs: Any) -> Iterator[Any]:
            it = super().list(config, **kwargs)
            while True:
                with _use(self.alias):
                    try:
                        item = next(it)
                    except StopIteration:
                        return
                yield item

        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            with _use(self.alias):
                return super().put(config, checkpoint, metadata, new_versions)

        def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            with _use(self.alias):
                return super().put_writes(config, writes, task_id, task_path)

        def delete_thread(self, thread_id: str) -> None:
            with _use(self.alias):
                return super().delete_thread(thread_id)

    return RoutedDjangoSaver


@contextmanager
def fresh() -> Iterator[Any]:
    """A DjangoSaver over a new SQLite file, removed on close."""
    template = _configure()
    from django.db import connections

    alias = storage_name("django")
    d = tempfile.mkdtemp(prefix="eco-django-")
    path = os.path.join(d, "db.sqlite3")
    shutil.copyfile(template, path)
    conf = dict(connections.settings["default"])
    conf["NAME"] = path
    connections.settings[alias] = conf
    try:
        with _use(alias):
            saver = _saver_class()()
        saver.alias = alias
        yield saver
    finally:
        connections[alias].close()
        shutil.rmtree(d, ignore_errors=True)
