"""Helpers shared by the factories: unique storage names, temporary
folders, the servers named by the environment."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_seq = itertools.count(1)


def storage_name(prefix: str = "eco") -> str:
    """A name for new storage no other open, process or run uses."""
    return f"{prefix}_{os.getpid()}_{int(time.time() * 1000):x}_{next(_seq)}"


def env(name: str) -> str:
    """The value of a server variable, or NotImplementedError naming it."""
    value = os.environ.get(name, "")
    if not value:
        raise NotImplementedError(f"{name} is not set: this saver needs a server (ci/ecosystem starts one)")
    return value


@contextmanager
def temp_dir(prefix: str) -> Iterator[str]:
    """A new temporary folder, removed afterwards."""
    d = tempfile.mkdtemp(prefix=f"eco-{prefix}-")
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def mysql_params(database: str | None = None) -> dict[str, Any]:
    """pymysql/aiomysql connect() arguments for CHECKPOINTKIT_MYSQL_URI."""
    u = urllib.parse.urlparse(env("CHECKPOINTKIT_MYSQL_URI"))
    params: dict[str, Any] = {
        "host": u.hostname or "127.0.0.1",
        "port": u.port or 3306,
        "user": u.username or "root",
        "password": u.password or "",
    }
    if database:
        params["database"] = database
    return params


@contextmanager
def mysql_database() -> Iterator[str]:
    """A new MariaDB database, dropped afterwards."""
    import pymysql

    name = storage_name()
    with pymysql.connect(**mysql_params(), autocommit=True) as admin:
        with admin.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{name}`")
    try:
        yield name
    finally:
        with pymysql.connect(**mysql_params(), autocommit=True) as admin:
            with admin.cursor() as cur:
                cur.execute(f"DROP DATABASE IF EXISTS `{name}`")


@contextmanager
def pg_schema() -> Iterator[tuple[str, str]]:
    """A new schema on CHECKPOINTKIT_POSTGRES_DSN, dropped afterwards:
    yields (dsn, schema)."""
    import psycopg

    dsn = env("CHECKPOINTKIT_POSTGRES_DSN")
    schema = storage_name()
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield dsn, schema
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def redis_delete_prefix(url: str, prefix: str) -> None:
    """Deletes every key of a Redis server that starts with prefix."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        batch = list(client.scan_iter(match=f"{prefix}*", count=500))
        for i in range(0, len(batch), 500):
            client.delete(*batch[i : i + 500])
    finally:
        client.close()
