"""Fixtures of the end-to-end tests (their helpers are modules beside: cli_harness,
service_harness, postgres_harness)."""

import pytest

from postgres_harness import Postgres, have_postgres


@pytest.fixture
def sample_records():
    """A few English and Chinese documents with varied ids."""
    return [
        {"id": 1, "text": "The quick brown fox jumps over the lazy dog near the river bank."},
        {"id": "doc-2", "text": "The quick brown fox jumped over the lazy dog near the river bank!"},
        {"id": 3.5, "text": "Completely different: stock markets fell sharply on Tuesday morning."},
        {"id": "中文", "text": "今天天气很好，我们去公园散步吧。"},
        {"id": 5, "text": ""},
    ]


@pytest.fixture(scope="module")
def postgres():
    if not have_postgres():
        pytest.skip("PostgreSQL 15 (initdb, pg_ctl) or psycopg2 is not installed")
    pg = Postgres()
    try:
        yield pg
    finally:
        pg.stop()
