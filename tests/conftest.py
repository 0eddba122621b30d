"""The kinds of test, told by folder, and one embedded FalkorDB server per test session.

tests/unit/ start no server and test logic alone; tests/integration/ run against the real
FalkorDB (the session's server, or one a test starts for itself); tests/e2e/ run whole flows:
commands in subprocesses, the demo, the console in a browser, the installed wheel. Each test
gets the marker of its folder (``pytest -m unit``), so no test file has to say it.

A run that names no path (``pytest``, ``pytest -m unit``) is spread over worker processes
(pytest-xdist, ``-n auto`` in pyproject.toml; the count is chosen here, in
``pytest_xdist_auto_num_workers``); a run that names a file or folder stays in one process
unless it passes ``-n``. Each worker is a session of its own: its own embedded server on a free
port with its own data, its own temporary folders, its tenants named by its process id.
"""

from __future__ import annotations

import itertools
import os
import re
import sys
import tempfile
from pathlib import Path

import pytest
from _pytest.assertion.rewrite import AssertionRewritingHook
from _pytest.mark.expression import Expression

from rescind.runtime.server import EmbeddedFalkorDB
from tests.support import examples

KINDS = ("unit", "integration", "e2e")
HERE = Path(__file__).resolve().parent
SERVER_FIXTURES = {"falkordb", "graph"}

_counter = itertools.count()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """How many workers ``-n auto`` starts: RESCIND_TEST_WORKERS if set; none (one process, as
    without xdist) when the command names files or folders or picks tests by name (``pytest
    tests/x.py``, ``pytest -m unit -k name``: every worker would collect everything again);
    otherwise one per core, at least two (tests/integration/workers took 27 to 37 s on two
    workers, 50 to 57 s on three; docs/testing.md has the measurements)."""
    if os.environ.get("RESCIND_TEST_WORKERS"):
        return int(os.environ["RESCIND_TEST_WORKERS"])
    if config.option.file_or_dir or config.option.keyword:
        return 0
    return max(2, len(os.sched_getaffinity(0)))


TERMINAL = ("COLUMNS", "LINES")


def pytest_configure_node(node) -> None:
    """(xdist, on the controller) The workers are told the terminal size variables of the run."""
    node.workerinput["rescind_terminal"] = {name: os.environ.get(name) for name in TERMINAL}


def pytest_configure(config: pytest.Config) -> None:
    """A worker's environment is the run's: xdist's workers start with COLUMNS=80 and LINES=24,
    which a run in one process does not have, and Rich fixes a console's width from COLUMNS
    when the console is made (``rescind.cli.common.out``, at import), after which a test's own
    ``COLUMNS`` (``CliRunner(env=...)``) is not heard and the command's output wraps at 80."""
    given = getattr(config, "workerinput", {}).get("rescind_terminal")
    for name, value in (given or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    # Every `rescind up` this process starts, a module's fixture's too (set up before any
    # test's own folder, ``up_registry``), announces itself in a folder of this process: a
    # command of a test on another worker never sees it (`rescind.cli.serving.second_server`
    # refuses to start a server while another `up` serves elsewhere).
    os.environ["RESCIND_RUN_DIR"] = tempfile.mkdtemp(prefix="rescind-up-")
    # Property tests draw a sample when the run is the unit half alone, their full counts
    # otherwise (tests/support/examples.py); decided before any test module is imported, and
    # not in xdist's controller, which imports none.
    if not config.getoption("numprocesses", 0) or hasattr(config, "workerinput"):
        examples.choose(selected_kinds(config) == {"unit"})


def selected_kinds(config: pytest.Config) -> set[str]:
    """The kinds of test a ``-m`` expression naming only kinds selects; all three otherwise."""
    expression = config.getoption("markexpr", "")
    names = set(re.findall(r"[A-Za-z_][\w.]*", expression)) - {"and", "or", "not"}
    if not expression or not names <= set(KINDS):
        return set(KINDS)
    compiled = Expression.compile(expression)
    return {kind for kind in KINDS if compiled.evaluate(lambda name, kind=kind: name == kind)}


def pytest_report_header(config: pytest.Config) -> str:
    return (f"property tests: {examples.mode(selected_kinds(config) == {'unit'})} counts "
            "(tests/support/examples.py; RESCIND_HYPOTHESIS=sample|thorough)")


def _rewrite_only_the_tests() -> None:
    """pytest rewrites the asserts of every module of a package that ships a pytest plugin
    (hypothesis, anyio, langsmith through LangChain) when it is imported, and with
    PYTHONDONTWRITEBYTECODE keeps none of them: about 2.4 s of CPU per process, in every
    worker, for asserts no test reads. The tests and conftests are still rewritten."""
    for hook in sys.meta_path:
        if isinstance(hook, AssertionRewritingHook):
            hook._must_rewrite.clear()
            hook._marked_for_rewrite_cache.clear()


_rewrite_only_the_tests()


def kind_of(item: pytest.Item) -> str:
    """The folder right under tests/ that holds the item's file."""
    return Path(item.path).resolve().relative_to(HERE).parts[0]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``-m unit`` (or any marker expression naming only the kinds) does not import the folders
    it would deselect whole: importing tests/integration and tests/e2e cost a third of the unit
    half's time."""
    folder = collection_path.resolve()
    if folder.parent != HERE or folder.name not in KINDS:
        return None
    return folder.name not in selected_kinds(config) or None


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    misplaced, needs_server = [], []
    for item in items:
        kind = kind_of(item)
        if kind not in KINDS:
            misplaced.append(item.nodeid)
            continue
        item.add_marker(getattr(pytest.mark, kind))
        if kind == "unit" and SERVER_FIXTURES & set(item.fixturenames):
            needs_server.append(item.nodeid)
    if misplaced:
        raise pytest.UsageError("tests live in tests/unit, tests/integration or tests/e2e: "
                                + ", ".join(misplaced))
    if needs_server:
        raise pytest.UsageError("a unit test uses no FalkorDB; move these to tests/integration: "
                                + ", ".join(needs_server))


@pytest.fixture(autouse=True)
def spool_dir(tmp_path_factory, monkeypatch) -> Path:
    """Each test's publishers spool in a folder of their own (and so do the processes the test
    starts): never in the user's cache, and never sending what another test left unsent."""
    path = tmp_path_factory.mktemp("spool")
    monkeypatch.setenv("RESCIND_SPOOL_DIR", str(path))
    return path


@pytest.fixture(autouse=True)
def up_registry(tmp_path_factory, monkeypatch) -> Path:
    """The `rescind up` processes a test starts announce themselves in a folder of the test's
    own (rescind.cli.serving): a command of another test, or the developer's own `rescind up`,
    never sees them, nor they it."""
    path = tmp_path_factory.mktemp("rescind-up")
    monkeypatch.setenv("RESCIND_RUN_DIR", str(path))
    return path


@pytest.fixture(scope="session")
def falkordb():
    """The embedded server; or a local cluster of RESCIND_TEST_CLUSTER masters (``make
    test-cluster``); or the server or cluster named by RESCIND_TEST_URL."""
    if os.environ.get("RESCIND_TEST_URL"):
        yield os.environ["RESCIND_TEST_URL"]
        return
    if masters := int(os.environ.get("RESCIND_TEST_CLUSTER") or 0):
        from rescind.runtime.cluster import EmbeddedCluster

        with EmbeddedCluster(masters) as cluster:
            yield cluster.url
        return
    with EmbeddedFalkorDB() as server:
        yield server.url


@pytest.fixture
def tenant_name(request) -> str:
    """A tenant of the test's own, created on the session's server
    (``rescind.graph.tenants.create``, as every harness creates its tenants: the writer applies
    only the events of tenants that were) and removed afterwards. In a unit test it is only a
    name (no server); a test that starts a server of its own creates it there."""
    name = f"t{os.getpid()}-{next(_counter)}"
    if kind_of(request.node) == "unit":
        yield name
        return
    from rescind.graph import tenants
    from rescind.graph.store import connect

    conn = connect(request.getfixturevalue("falkordb"))
    tenants.create(conn, name, by="tests", schema=False)
    yield name
    tenants.drop(conn, name)


@pytest.fixture
def another_tenant(falkordb, tenant_name):
    """Creates more tenants on the session's server for the test (``another_tenant("x")`` is
    the test's tenant name plus "x"), removed afterwards."""
    from rescind.graph import tenants
    from rescind.graph.store import connect

    conn, made = connect(falkordb), []

    def create(suffix: str) -> str:
        made.append(tenant_name + suffix)
        tenants.create(conn, made[-1], by="tests", schema=False)
        return made[-1]

    yield create
    for name in made:
        tenants.drop(conn, name)


@pytest.fixture
def graph(falkordb, tenant_name):
    """A fresh tenant graph on the session's server (the tenant's), removed afterwards."""
    from rescind.graph.store import TenantGraph, connect

    g = TenantGraph(connect(falkordb), tenant_name)
    yield g
    g.delete()
