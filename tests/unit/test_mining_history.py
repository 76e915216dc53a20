from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harnessdrive.cli.flags import error_message
from harnessdrive.errors import UserError
from harnessdrive.mining import ScanResult, scan_history
from harnessdrive.testing.repo_builder import Gitlink, RepoBuilder, lfs_pointer

ALL = "2000-01-01"
OPS = "def add(a, b):\n    return a + b\n"
TEST = "from ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


def lines(count: int, tag: str = "v") -> str:
    return "".join(f"{tag}_{i} = {i}\n" for i in range(count))


@dataclass
class History:
    repo: RepoBuilder
    shas: dict[str, str]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    """One commit for every rule, oldest first."""
    repo = RepoBuilder(tmp_path_factory.mktemp("history") / "repo")
    s = {}
    s["first"] = repo.commit("Initial", {"src/ops.py": OPS, "tests/test_ops.py": TEST})
    s["good"] = repo.commit(
        "Fix add\n\nIt subtracted.\n\nCo-Authored-By: A <a@example.com>",
        {"src/ops.py": OPS + "# fixed\n", "tests/test_ops.py": TEST + "# more\n"},
    )
    s["many_files"] = repo.commit(
        "Touch 31 files",
        {f"src/m{i}.py": "x = 1\n" for i in range(30)} | {"tests/test_m.py": TEST},
    )
    s["thirty_files"] = repo.commit(
        "Touch exactly 30 files",
        {f"src/n{i}.py": "x = 1\n" for i in range(29)} | {"tests/test_n.py": TEST},
    )
    s["many_lines"] = repo.commit(
        "Add 1001 lines", {"src/big.py": lines(1000), "tests/test_big.py": "x = 1\n"}
    )
    s["thousand_lines"] = repo.commit(
        "Add exactly 1000 lines", {"src/big2.py": lines(999), "tests/test_big2.py": "x = 1\n"}
    )
    s["docs"] = repo.commit("Document", {"README.md": "# ops\n", "docs/guide.rst": "Guide\n"})
    s["source_only"] = repo.commit("Tidy", {"src/ops.py": OPS + "# tidy\n"})
    s["tests_only"] = repo.commit("More tests", {"tests/test_ops.py": TEST + "# again\n"})
    s["config_and_test"] = repo.commit(
        "Settings", {"config/app.yaml": "a: 1\n", "tests/test_cfg.py": TEST}
    )
    repo.create_branch("feature")
    s["feature"] = repo.commit(
        "Feature work", {"src/feat.py": OPS, "tests/test_feat.py": TEST}, branch="feature"
    )
    s["merge"] = repo.merge(
        s["feature"],
        message="Merge feature",
        files={"src/feat.py": OPS, "tests/test_feat.py": TEST},
    )
    s["binary"] = repo.commit(
        "Add an icon loader",
        {
            "assets/icon.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00binary",
            "src/icons.py": "ICON = 'assets/icon.png'\n",
            "tests/test_icons.py": TEST,
        },
    )
    s["latin1_name"] = repo.commit(
        "Handle caf\u00e9", {b"src/caf\xe9.py": "x = 1\n", b"tests/test_caf\xe9.py": TEST}
    )
    repo.sync()
    return History(repo, s)


@pytest.fixture(scope="module")
def scan(history: History) -> ScanResult:
    return scan_history(history.repo.path, since=ALL)


def test_skip_reasons_are_counted_exactly(scan: ScanResult) -> None:
    assert scan.counts.skipped == {
        "first commit": 1,
        "too large": 2,
        "no source changes": 3,
        "no test changes": 1,
    }
    # 14 commits written, one of them a merge: merges are not counted at all.
    assert scan.counts.commits == 13
    assert scan.counts.candidates == 6 == len(scan.candidates)


def test_candidates_come_newest_first(history: History, scan: ScanResult) -> None:
    names = {sha: name for name, sha in history.shas.items()}
    assert [names[c.commit] for c in scan.candidates] == [
        "latin1_name",
        "binary",
        "feature",
        "thousand_lines",
        "thirty_files",
        "good",
    ]


def test_merge_commits_are_left_out(history: History, scan: ScanResult) -> None:
    assert history.shas["merge"] not in {c.commit for c in scan.candidates}


def test_the_candidate_record(history: History, scan: ScanResult) -> None:
    [good] = [c for c in scan.candidates if c.commit == history.shas["good"]]
    assert good.id == history.shas["good"][:12]
    assert good.parent == history.shas["first"]
    assert good.subject == "Fix add"
    assert good.body == "It subtracted."
    assert good.hidden_tests == ["tests/test_ops.py"]
    assert good.gold_files == ["src/ops.py"]
    assert good.gold_lines == 1
    assert not good.changes_dependencies
    assert scan.head == history.repo.tip()
    assert scan.repo == str(history.repo.path)
    assert scan.since == ALL and not scan.shallow


def test_binary_files_count_as_files_but_not_lines(history: History, scan: ScanResult) -> None:
    [binary] = [c for c in scan.candidates if c.commit == history.shas["binary"]]
    icon = binary.change("assets/icon.png")
    assert icon.binary and icon.added is None and icon.kind == "other"
    assert binary.binary_files == ["assets/icon.png"]
    assert binary.gold_files == ["assets/icon.png", "src/icons.py"]
    assert binary.gold_lines == 1


def test_binary_files_alone_can_make_a_commit_too_large(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": OPS})
    repo.commit(
        "Many images",
        {f"img/{i}.png": bytes([0, i]) for i in range(29)}
        | {"src/a.py": OPS + "#\n", "tests/test_a.py": TEST},
    )
    assert scan_history(repo.path, since=ALL).counts.skipped == {
        "first commit": 1,
        "too large": 1,
    }


def test_file_names_that_are_not_utf8_survive(history: History, scan: ScanResult) -> None:
    [cafe] = [c for c in scan.candidates if c.commit == history.shas["latin1_name"]]
    assert cafe.gold_files == ["src/caf\udce9.py"]
    assert cafe.hidden_tests == ["tests/test_caf\udce9.py"]
    again = ScanResult.model_validate_json(scan.model_dump_json())
    assert again == scan


def test_awkward_but_valid_file_names(tmp_path: Path) -> None:
    names = ["src/we ird\tname.py", "src/new\nline.py", 'src/"quoted".py', "src/*.py"]
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": OPS})
    repo.commit("Odd names", {name: OPS for name in names} | {"tests/test_a.py": TEST})
    [candidate] = scan_history(repo.path, since=ALL).candidates
    assert sorted(candidate.gold_files) == sorted(names)


def test_messages_that_are_not_utf8_never_crash(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": OPS})
    files = {"src/a.py": OPS + "#1\n", "tests/test_a.py": TEST}
    repo.commit(b"Fix caf\xe9 without a header\n\nBody \xff\xfe.", files)
    files = {"src/a.py": OPS + "#2\n", "tests/test_a.py": TEST + "#\n"}
    repo.commit(b"Fix caf\xe9 with a header", files, encoding="ISO-8859-1")
    declared, raw = scan_history(repo.path, since=ALL).candidates
    assert declared.subject == "Fix caf\u00e9 with a header"
    assert raw.subject == "Fix caf\ufffd without a header"
    assert raw.body == "Body \ufffd\ufffd."


def test_first_commit_is_skipped_even_alone(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": OPS, "tests/test_a.py": TEST})
    scan = scan_history(repo.path, since=ALL)
    assert scan.counts.model_dump() == {
        "commits": 1,
        "candidates": 0,
        "skipped": {"first commit": 1},
    }


def test_a_shallow_clone_counts_its_oldest_commit_as_a_first_commit(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    for i in range(5):
        repo.commit(f"Change {i}", {"src/a.py": OPS + f"#{i}\n", "tests/test_a.py": TEST + f"#{i}"})
    clone = repo.shallow_clone(tmp_path / "shallow", depth=2)
    scan = scan_history(clone, since=ALL)
    assert scan.shallow
    assert scan.counts.model_dump() == {
        "commits": 2,
        "candidates": 1,
        "skipped": {"first commit": 1},
    }
    assert scan.candidates[0].subject == "Change 4"


def test_a_partial_clone_is_refused_with_the_fix(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": OPS})
    repo.commit("Fix", {"src/a.py": OPS + "#\n", "tests/test_a.py": TEST})
    clone = repo.partial_clone(tmp_path / "partial")
    with pytest.raises(UserError, match="partial clone") as raised:
        scan_history(clone, since=ALL)
    assert "git fetch --refetch origin" in str(raised.value)


def test_partial_clone_settings_alone_are_refused(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": OPS})
    repo.mark_partial_clone("upstream")
    with pytest.raises(UserError, match="remote 'upstream'"):
        scan_history(repo.path, since=ALL)


@pytest.mark.parametrize(
    ("key", "value", "refused"),
    [
        ("extensions.partialClone", "origin", True),  # what older git versions wrote
        ("remote.origin.promisor", "yes", True),
        ("remote.origin.promisor", "false", False),
        ("remote.origin.partialclonefilter", "blob:none", False),  # no promisor: not partial
    ],
)
def test_partial_clone_settings(tmp_path: Path, key: str, value: str, refused: bool) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": OPS})
    repo.git("config", key, value)
    if refused:
        with pytest.raises(UserError, match="partial clone"):
            scan_history(repo.path, since=ALL)
    else:
        assert scan_history(repo.path, since=ALL).counts.commits == 1


def test_submodule_pointers_are_not_source(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": OPS, "vendor/lib": Gitlink("1" * 40)})
    repo.commit("Bump lib, test it", {"vendor/lib": Gitlink("2" * 40), "tests/test_a.py": TEST})
    repo.commit(
        "Bump lib, use it",
        {"vendor/lib": Gitlink("3" * 40), "src/a.py": OPS + "#\n", "tests/test_a.py": TEST + "#"},
    )
    repo.commit("Submodule in a test folder", {"tests/fixtures/repo": Gitlink("4" * 40)})
    scan = scan_history(repo.path, since=ALL)
    assert scan.counts.skipped == {"first commit": 1, "no source changes": 2}
    [candidate] = scan.candidates
    assert candidate.submodules == ["vendor/lib"]
    assert candidate.change("vendor/lib").kind == "submodule"
    assert candidate.gold_files == ["src/a.py"]
    assert candidate.hidden_tests == ["tests/test_a.py"]
    assert candidate.gold_lines == 1


def test_lfs_pointer_files_are_flagged(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": OPS, ".gitattributes": "*.bin filter=lfs -text\n"})
    repo.commit(
        "Load the model",
        {
            "tests/data/model.bin": lfs_pointer(b"\0" * 4096),
            "tests/data/small.json": "{}\n",
            "src/a.py": OPS + "#\n",
            "tests/test_a.py": TEST,
        },
    )
    [candidate] = scan_history(repo.path, since=ALL).candidates
    assert candidate.lfs_pointers == ["tests/data/model.bin"]
    assert candidate.hidden_tests == [
        "tests/data/model.bin",
        "tests/data/small.json",
        "tests/test_a.py",
    ]


def test_dependency_changes_are_recorded(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": OPS})
    repo.commit(
        "Use requests",
        {"pyproject.toml": "[project]\n", "src/a.py": OPS + "#\n", "tests/test_a.py": TEST},
    )
    repo.commit("Plain fix", {"src/a.py": OPS + "#2\n", "tests/test_a.py": TEST + "#"})
    plain, with_dependency = scan_history(repo.path, since=ALL).candidates
    assert with_dependency.changes_dependencies
    assert with_dependency.dependency_files == ["pyproject.toml"]
    assert with_dependency.gold_lines == 2
    assert not plain.changes_dependencies


def test_gold_lines_leave_docs_out(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": OPS})
    repo.commit(
        "Fix and document",
        {
            "src/a.py": OPS + "#\n",
            "config/x.yaml": "a: 1\nb: 2\n",
            "README.md": lines(50),
            "tests/test_a.py": TEST,
        },
    )
    [candidate] = scan_history(repo.path, since=ALL).candidates
    assert candidate.gold_files == ["README.md", "config/x.yaml", "src/a.py"]
    assert candidate.gold_lines == 3


def test_deleted_test_files_are_hidden_tests(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": OPS, "tests/test_old.py": TEST})
    repo.commit("Drop old API", {"src/a.py": "\n"}, delete=["tests/test_old.py"])
    [candidate] = scan_history(repo.path, since=ALL).candidates
    assert candidate.hidden_tests == ["tests/test_old.py"]
    assert candidate.change("tests/test_old.py").status == "D"
    assert candidate.change("tests/test_old.py").new_blob is None


def test_custom_limits(history: History) -> None:
    by_files = scan_history(history.repo.path, since=ALL, max_files=2, max_lines=10**6)
    assert by_files.counts.skipped["too large"] == 3  # 31 files, 30 files, binary has 3
    by_lines = scan_history(history.repo.path, since=ALL, max_files=100, max_lines=2)
    assert by_lines.counts.skipped["too large"] == 8  # all but good, docs, tidy, more tests


# --- the time window -------------------------------------------------------------------


@pytest.fixture(scope="module")
def dated(tmp_path_factory: pytest.TempPathFactory) -> RepoBuilder:
    repo = RepoBuilder(tmp_path_factory.mktemp("dated") / "repo")
    repo.commit("Initial", {"src/a.py": OPS}, date="2024-01-01T12:00:00+00:00")
    for day in (3, 5, 8):
        repo.commit(
            f"Day {day}",
            {"src/a.py": OPS + f"#{day}\n", "tests/test_a.py": TEST + f"#{day}"},
            date=f"2024-01-0{day}T00:00:00+00:00",
        )
    return repo


def test_an_empty_window_reads_heads_date_for_the_hint(dated: RepoBuilder) -> None:
    later = datetime(2026, 1, 8, tzinfo=UTC)
    assert scan_history(dated.path, since="30d", now=later).head_date == "2024-01-08"
    # A window with commits needs no hint, and no git call for it.
    assert scan_history(dated.path, since="1000d", now=later).head_date is None


@pytest.mark.parametrize(
    ("since", "subjects"),
    [
        ("3d", ["Day 8", "Day 5"]),  # now is 2024-01-08 00:00: back to 01-05 00:00
        ("2d", ["Day 8"]),
        ("0d", ["Day 8"]),  # committed exactly at now
        ("2024-01-05", ["Day 8", "Day 5"]),  # from the start of that day
        ("2024-01-06", ["Day 8"]),
        ("2024-01-09", []),
        ("365d", ["Day 8", "Day 5", "Day 3"]),
    ],
)
def test_since(dated: RepoBuilder, since: str, subjects: list[str]) -> None:
    now = datetime(2024, 1, 8, tzinfo=UTC)
    scan = scan_history(dated.path, since=since, now=now)
    assert [c.subject for c in scan.candidates] == subjects


def test_the_window_counts_only_its_own_commits(dated: RepoBuilder) -> None:
    now = datetime(2024, 1, 8, tzinfo=UTC)
    assert scan_history(dated.path, since="2024-01-05", now=now).counts.commits == 2
    assert scan_history(dated.path, since="2000-01-01", now=now).counts.skipped == {
        "first commit": 1
    }


@pytest.mark.parametrize(
    "since", ["365", "d", "-1d", "1w", "1.5d", " 5d", "2024-13-01", "2024-1-1", "yesterday", ""]
)
def test_a_bad_since_is_a_user_error(dated: RepoBuilder, since: str) -> None:
    with pytest.raises(UserError, match="the history start") as caught:
        scan_history(dated.path, since=since)
    assert error_message(caught.value).endswith("(--since)")


def test_since_describes_itself(dated: RepoBuilder) -> None:
    now = datetime(2024, 1, 8, tzinfo=UTC)
    assert scan_history(dated.path, since="1d", now=now).since_description == "1 day ago"
    assert scan_history(dated.path, since="30d", now=now).since_description == "30 days ago"
    assert scan_history(dated.path, "2024-01-02", now=now).since_description == "2024-01-02"


# --- what is not a repository ------------------------------------------------------------


def test_a_folder_that_is_no_repository(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a git repository"):
        scan_history(tmp_path, since=ALL)


def test_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a git repository"):
        scan_history(tmp_path / "nowhere", since=ALL)


def test_a_repository_git_cannot_read_says_why(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": OPS})
    repo.git("config", "core.repositoryformatversion", "99")
    with pytest.raises(UserError, match=r"cannot be read as a git repository: .*version"):
        scan_history(repo.path, since=ALL)


def test_a_repository_without_commits(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    with pytest.raises(UserError, match="no commits"):
        scan_history(repo.path, since=ALL)


def test_a_repository_folder_whose_name_is_not_utf8(tmp_path: Path) -> None:
    folder = tmp_path / os.fsdecode(b"caf\xe9")
    repo = RepoBuilder(folder)
    repo.commit("Initial", {"src/a.py": OPS})
    repo.commit("Fix", {"src/a.py": OPS + "#\n", "tests/test_a.py": TEST})
    scan = scan_history(repo.path, since=ALL)
    assert scan.repo == str(folder) and scan.counts.candidates == 1
    assert ScanResult.model_validate_json(scan.model_dump_json()) == scan


def test_a_subfolder_scans_the_whole_repository(history: History, scan: ScanResult) -> None:
    sub = history.repo.path / "sub"
    sub.mkdir(exist_ok=True)
    assert scan_history(sub, since=ALL) == scan


def test_a_bare_repository(history: History, scan: ScanResult, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    history.repo.git("clone", "-q", "--bare", str(history.repo.path), str(bare))
    found = scan_history(bare, since=ALL)
    assert found.counts == scan.counts and found.candidates == scan.candidates


def test_a_runners_settings_alone_are_no_test_changes(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": OPS, "tests/test_a.py": TEST})
    repo.commit("Declare 3.13", {"src/a.py": OPS + "#\n", "tox.ini": "[tox]\nenvlist = py313\n"})
    repo.commit("Fixture", {"src/a.py": OPS + "#2\n", "tests/conftest.py": "X = 1\n"})
    data = repo.commit("New data", {"src/a.py": OPS + "#3\n", "tests/data/cases.json": "[]\n"})
    both = repo.commit(
        "Fix", {"src/a.py": OPS + "#4\n", "tox.ini": "[tox]\n", "tests/test_a.py": TEST + "#"}
    )
    scan = scan_history(repo.path, since=ALL)
    assert [c.commit for c in scan.candidates] == [both, data]
    assert scan.counts.skipped["no test changes"] == 2
    # A settings file that comes with a test is one of the hidden files all the same.
    assert sorted(scan.candidates[0].hidden_tests) == ["tests/test_a.py", "tox.ini"]


def test_a_revision_is_mined_back_from_instead_of_head(history: History) -> None:
    scan = scan_history(history.repo.path, ALL, rev=history.shas["good"])
    assert scan.head == history.shas["good"]
    assert [c.commit for c in scan.candidates] == [history.shas["good"]]
    with pytest.raises(UserError, match="has no revision 'no-such-branch'"):
        scan_history(history.repo.path, ALL, rev="no-such-branch")
    with pytest.raises(UserError, match="is not a revision"):
        scan_history(history.repo.path, ALL, rev="--all")
