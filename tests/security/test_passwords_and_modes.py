"""Issue 13, findings 4 and 8: no output shows a password, whatever form it was given in
(URL user info, ``?password=``, ``sslpassword``, a DSN), in CLI errors, ``db current`` /
``db upgrade`` and the ``serve`` banner; database files are 0600 and the folders the store
creates 0700 under ``umask 000``, whatever URL form opened them."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import store
from store.cli.main import cli
from store.db.schema.engine import redact_url

SECRET = "Sekr3t-pw-9f8e7d"
SSL_SECRET = "Ssl-Sekr3t-1a2b3c"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output + result.stderr


def with_passwords(url: str) -> str:
    """``url`` (trust authentication: the server ignores the password) with a password in
    the query string, as libpq allows, and an SSL key password."""
    return f"{url}?password={SECRET}&sslpassword={SSL_SECRET}"


class TestRedactUrl:
    @pytest.mark.parametrize("url", [
        f"postgresql+psycopg://app:{SECRET}@db/x",
        f"postgresql+psycopg://app@db/x?password={SECRET}",
        f"postgresql+psycopg://app@db/x?sslmode=require&sslpassword={SECRET}&application_name=a",
        f"postgresql+psycopg://app:{SECRET}@db/x?password={SECRET}&PassWord={SECRET}",
        f"host=db user=app password={SECRET} dbname=x",  # a libpq DSN: not a URL at all
        f"postgresql+psycopg://app@db/x?options=-c%20x&api_key={SECRET}",
    ])
    def test_no_form_of_password_survives(self, url):
        shown = redact_url(url)

        assert SECRET not in shown
        assert "***" in shown or shown == "<unparseable database URL>"

    def test_the_rest_of_the_url_stays_readable(self):
        assert redact_url(f"postgresql+psycopg://app@db:5433/x?sslmode=require&password={SECRET}"
                          ) == "postgresql+psycopg://app@db:5433/x?password=***&sslmode=require"

    def test_hide_passwords_in_free_text(self):
        text = (f"connect host=db password={SECRET} user=app failed; "
                f"url postgres://u:{SECRET}@h/d?sslpassword={SSL_SECRET}")

        shown = store.hide_passwords(text)

        assert SECRET not in shown and SSL_SECRET not in shown
        assert "user=app failed" in shown and "postgres://u:***@h/d" in shown


@pytest.mark.postgres
class TestPostgresCommands:
    def test_db_upgrade_and_current_print_no_password(self, postgres_url):
        url = with_passwords(postgres_url)
        for args in (["db", "upgrade"], ["db", "current"], ["db", "check"]):
            code, output = run(*args, "--db", url)

            assert code == 0, output
            assert SECRET not in output and SSL_SECRET not in output
            assert "password=***" in output

    def test_errors_print_no_password(self, postgres_url):
        missing = postgres_url.rsplit("/", 1)[0] + "/ts_security_no_such_db"
        for url in (with_passwords(missing),
                    missing.replace("postgres@", f"postgres:{SECRET}@")
                    + f"?sslpassword={SSL_SECRET}",
                    f"host=127.0.0.1 password={SECRET} dbname=x"):
            for args in (["db", "current"], ["sessions", "list"], ["verify"]):
                code, output = run(*args, "--db", url)

                assert code == 1, output
                assert output.startswith("error:")
                assert SECRET not in output and SSL_SECRET not in output

    def test_the_serve_banner_prints_no_password(self, postgres_url):
        proc = subprocess.Popen(
            [sys.executable, "-m", "store", "serve", "--db", with_passwords(postgres_url),
             "--port", "0", "--quiet"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stderr is not None
            banner = proc.stderr.readline()
        finally:
            proc.terminate()
            proc.communicate(timeout=30)

        assert banner.startswith("serving ") and "read-only at http://127.0.0.1:" in banner
        assert SECRET not in banner and SSL_SECRET not in banner
        assert "password=***" in banner


# -- file modes ---------------------------------------------------------------------------------

OPEN_UNDER_UMASK_000 = r"""
import os, sys
os.umask(0)
import store
url = sys.argv[1]
with store.TranscriptStore.open(url) as opened:
    opened.append("s", [{"role": "user", "content": "hi"}])
    for name in sorted(os.listdir(sys.argv[2])):
        print(name, oct(os.stat(os.path.join(sys.argv[2], name)).st_mode & 0o777))
"""


def modes_after_open(url: str, folder: Path, cwd: Path) -> dict[str, int]:
    done = subprocess.run([sys.executable, "-c", OPEN_UNDER_UMASK_000, url, str(folder)],
                          capture_output=True, text=True, timeout=120, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return {name: int(mode, 8) for name, mode in
            (line.split() for line in done.stdout.splitlines())}


@pytest.mark.sqlite
class TestFileModes:
    @pytest.mark.parametrize("form", [
        "sqlite:///{path}",
        "sqlite:///file:{path}?uri=true",
        "sqlite:///file:{path}?mode=rwc&cache=private&uri=true",
        "sqlite:///file://{path}?uri=true",
        "sqlite:///file:{relative}?uri=true",
        "sqlite:///{relative}",
    ])
    def test_every_url_form_creates_0600_files_in_0700_folders(self, tmp_path, form):
        folder = tmp_path / "new" / "deeper"
        path = folder / "store.sqlite"
        url = form.format(path=path, relative="new/deeper/store.sqlite")

        modes = modes_after_open(url, folder, cwd=tmp_path)

        assert modes["store.sqlite"] == 0o600
        assert {name for name in modes if name.endswith(("-wal", "-shm"))}, modes
        assert set(modes.values()) == {0o600}, modes  # the -wal and -shm files too
        for created in (tmp_path / "new", folder):
            assert stat.S_IMODE(created.stat().st_mode) == 0o700

    def test_the_default_location_is_created_private(self, tmp_path):
        env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg" / "data")}
        env.pop("TRANSCRIPT_STORE_URL", None)
        done = subprocess.run([sys.executable, "-c", "import os; os.umask(0); import store; "
                               "store.TranscriptStore.open().close()"],
                              env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr

        for folder in (tmp_path / "xdg", tmp_path / "xdg" / "data",
                       tmp_path / "xdg" / "data" / "transcript-store"):
            assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
        database = tmp_path / "xdg" / "data" / "transcript-store" / "transcripts.sqlite"
        assert stat.S_IMODE(database.stat().st_mode) == 0o600

    def test_an_existing_folder_keeps_its_mode(self, tmp_path):
        tmp_path.chmod(0o755)
        modes_after_open(f"sqlite:///{tmp_path / 'x.sqlite'}", tmp_path, cwd=tmp_path)

        assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755
