"""The databases ``bench/storage.py`` runs on: one scratch SQLite file or PostgreSQL database
per implementation (the store, the raw baselines, each peer), made and dropped per run."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from storage_peers import Peer, _langchain, _peer_targets, _sdk_postgres, _sdk_sqlite
from storage_plain import PlainPostgres, PlainSQLite
from storage_raw import RawStore
from storage_raw_backends import RawPostgres, RawSQLite


@dataclass
class Backend:
    name: str
    store_url: str
    open_raw: Callable[[bool], RawStore]  # create?
    open_store_side: Callable[[], RawStore]  # a raw reader on the store's database
    cleanup: Callable[[], None]
    label: str = ""
    raw_target: str = ""  # what a writer process opens: the raw SQLite path or DSN
    open_peers: Callable[[], list[Peer]] = lambda: []
    #: What a peer's writer process opens, by writer kind ("sdk", "langchain").
    peer_targets: dict[str, str] = field(default_factory=dict)



def _sqlite_backend(root: Path, attempt: int) -> Backend:
    store_path = root / f"store-{attempt}.sqlite"
    raw_path = root / f"raw-{attempt}.sqlite"

    def cleanup() -> None:
        for path in root.glob(f"*-{attempt}.sqlite*"):
            path.unlink()

    return Backend(
        "sqlite", f"sqlite:///{store_path}",
        lambda create: RawSQLite(raw_path, create=create),
        lambda: RawSQLite(store_path, create=False),
        cleanup, f"SQLite {sqlite3.sqlite_version} (file, WAL, synchronous=NORMAL)",
        str(raw_path), lambda: [p for p in (
            PlainSQLite(root / f"plain-{attempt}.sqlite"),
            _sdk_sqlite(root / f"sdk-{attempt}.sqlite"),
            _langchain(f"sqlite:///{root / f'langchain-{attempt}.sqlite'}")) if p is not None],
        {"plain": str(root / f"plain-{attempt}.sqlite")}
        | _peer_targets(str(root / f"sdk-{attempt}.sqlite"),
                        f"sqlite:///{root / f'langchain-{attempt}.sqlite'}"),
    )


def _with_database(dsn: str, database: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit((parts.scheme, parts.netloc, "/" + database, parts.query, parts.fragment))


def _postgres_backend(dsn: str, attempt: int) -> Backend:
    names = (f"bench_{os.getpid()}_{attempt}_store", f"bench_{os.getpid()}_{attempt}_raw",
             f"bench_{os.getpid()}_{attempt}_sdk", f"bench_{os.getpid()}_{attempt}_langchain",
             f"bench_{os.getpid()}_{attempt}_plain")
    with psycopg.connect(dsn, autocommit=True) as admin:
        for name in names:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
            admin.execute(f'CREATE DATABASE "{name}" ENCODING \'UTF8\' TEMPLATE template0')
        version = admin.info.server_version

    def cleanup() -> None:
        with psycopg.connect(dsn, autocommit=True) as admin:
            for name in names:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    store_dsn, raw_dsn, sdk_dsn, langchain_dsn, plain_dsn = (_with_database(dsn, n)
                                                             for n in names)
    store_url = "postgresql+psycopg://" + store_dsn.split("://", 1)[1]
    return Backend(
        "postgres", store_url,
        lambda create: RawPostgres(raw_dsn, create=create),
        lambda: RawPostgres(store_dsn, create=False),
        cleanup, f"PostgreSQL {version // 10000}.{version % 10000} (psycopg {psycopg.__version__})",
        raw_dsn, lambda: [p for p in (
            PlainPostgres(plain_dsn),
            _sdk_postgres(sdk_dsn),
            _langchain("postgresql+psycopg://" + langchain_dsn.split("://", 1)[1]))
            if p is not None],
        {"plain": plain_dsn}
        | _peer_targets(sdk_dsn, "postgresql+psycopg://" + langchain_dsn.split("://", 1)[1]),
    )
