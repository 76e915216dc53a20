from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from harnessdrive.accounting import PriceBook
from harnessdrive.accounting.price_overrides import load_override_file
from harnessdrive.errors import UserError
from harnessdrive.transcript import ModelCall, Usage

DAY = date(2026, 6, 15)


def write(tmp_path: Path, text: str, name: str = "prices.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_minimal_row_for_a_mock_model(tmp_path: Path) -> None:
    path = write(tmp_path, '[[price]]\nmodel = "Mock-Model"\ninput = 1.5\noutput = 2\n')
    book = PriceBook.load(extra_files=[path])
    record = book.lookup("mock-model", on=DAY)
    assert record is not None
    assert record.provider is None
    # Cache rates left out fall back to the input rate; the 1-hour write to the 5-minute one.
    assert record.rates.model_dump() == {
        "input": Decimal("1.5"),
        "cache_read": Decimal("1.5"),
        "cache_write_5m": Decimal("1.5"),
        "cache_write_1h": Decimal("1.5"),
        "output": Decimal("2"),
    }
    assert record.source.name == "user config"
    assert (record.source.file, record.source.row) == (str(path), 1)
    # A row without a provider applies whatever provider the call names.
    assert book.lookup("mock-model", "scripted", on=DAY) == record


def test_a_full_row(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
[[price]]
provider = "mock"
model = "mock-big"
aliases = ["mock-big-latest"]
input = 3
cache_read = 0.3
cache_write_5m = 3.75
cache_write_1h = 6
output = 15
long_context_threshold = 100_000
long_input = 6
long_output = 22.5
valid_from = 2026-01-01
valid_to = 2027-01-01
""",
    )
    (record,) = load_override_file(path)
    assert record.aliases == ("mock-big-latest",)
    assert record.rates.cache_write_1h == Decimal(6)
    assert record.long_context_threshold == 100_000
    assert record.long_context_rates is not None
    assert record.long_context_rates.model_dump() == {
        "input": Decimal(6),
        "cache_read": Decimal(6),
        "cache_write_5m": Decimal(6),
        "cache_write_1h": Decimal(6),
        "output": Decimal("22.5"),
    }
    assert (record.valid_from, record.valid_to) == (date(2026, 1, 1), date(2027, 1, 1))
    call = ModelCall(
        model="mock-big-latest",
        provider="mock",
        usage=Usage(input=150_000, output=1_000),
    )
    # 150000 x 6 + 1000 x 22.5 per million tokens
    assert PriceBook.load([path]).price([call], on=DAY).total_usd == 0.9225


def test_user_rows_win_on_their_days_and_bundled_rows_elsewhere(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
[[price]]
provider = "anthropic"
model = "claude-sonnet-4-5"
input = 1
output = 1
valid_from = 2026-06-01
valid_to = 2026-07-01
""",
    )
    book = PriceBook.load(extra_files=[path])
    inside = book.lookup("claude-sonnet-4-5-20250929", "anthropic", on=date(2026, 6, 30))
    outside = book.lookup("claude-sonnet-4-5-20250929", "anthropic", on=date(2026, 7, 1))
    assert inside is not None
    assert outside is not None
    assert (inside.source.name, inside.rates.input) == ("user config", Decimal(1))
    assert (outside.source.name, outside.rates.input) == ("genai-prices", Decimal(3))


def test_an_override_answers_to_every_name_of_the_model_it_replaces(tmp_path: Path) -> None:
    # The row names an alias; the bundled model's canonical id must find the row too.
    path = write(
        tmp_path,
        '[[price]]\nprovider = "anthropic"\nmodel = "claude-sonnet-4.5"\ninput = 1\noutput = 1\n',
    )
    record = PriceBook.load([path]).lookup("claude-sonnet-4-5", on=DAY)
    assert record is not None
    assert record.source.name == "user config"
    assert "claude-sonnet-4-5" in record.aliases


def test_without_bundled_records(tmp_path: Path) -> None:
    path = write(tmp_path, '[[price]]\nmodel = "mock"\ninput = 1\noutput = 1\n')
    book = PriceBook.load([path], include_bundled=False)
    assert book.lookup("gpt-5", on=DAY) is None
    assert len(book.records) == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[price]]\nmodel = "m"\noutput = 1\n', "price row 1 (model 'm'): input: Field required"),
        (
            '[[price]]\nmodel = "m"\ninput = 1\noutput = 1\nper_token = 2\n',
            "price row 1 (model 'm'): per_token: Extra inputs are not permitted",
        ),
        ('[[price]]\nmodel = "m"\ninput = -1\noutput = 1\n', "input: Value error, a rate must be"),
        ('[[price]]\nmodel = "m"\ninput = "cheap"\noutput = 1\n', "input: Input should be a valid"),
        (
            '[[price]]\nmodel = "m"\ninput = 1\noutput = 1\n'
            "valid_from = 2026-02-01\nvalid_to = 2026-01-01\n",
            "must be before valid_to",
        ),
        (
            '[[price]]\nmodel = "m"\ninput = 1\noutput = 1\nlong_input = 2\n',
            "long_input need long_context_threshold",
        ),
        (
            '[[price]]\nmodel = "m"\ninput = 1\noutput = 1\nlong_context_threshold = 10\n',
            "needs long_input and long_output",
        ),
        ('[[price]]\nmodel = ""\ninput = 1\noutput = 1\n', "price row 1: model: Value error"),
        ('[[price]]\nmodel = "ok"\ninput = 1\noutput = 1\n[[price]]\nmodel = "m"\n', "price row 2"),
        ('model = "m"\n', "unknown key(s) model; a price file holds [[price]] rows only"),
        ('price = "m"\n', "'price' must be written as [[price]] tables"),
        ("[[price]\n", "not valid TOML"),
        (
            '[[price]]\nmodel = "m"\ninput = 1\noutput = 1\n'
            '[[price]]\nmodel = "m"\ninput = 2\noutput = 2\nvalid_from = 2026-01-01\n',
            "price rows 1 and 2 both price m for any provider on overlapping days",
        ),
    ],
)
def test_bad_rows_name_the_file_and_row(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(UserError) as caught:
        PriceBook.load(extra_files=[path])
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_rows_of_two_files_must_not_overlap(tmp_path: Path) -> None:
    first = write(tmp_path, '[[price]]\nmodel = "m"\ninput = 1\noutput = 1\n', "a.toml")
    second = write(tmp_path, '[[price]]\nmodel = "m"\ninput = 2\noutput = 2\n', "b.toml")
    with pytest.raises(UserError) as caught:
        PriceBook.load([first, second])
    assert str(caught.value) == (
        f"price records overlap: user config {first} row 1 and user config {second} row 1 "
        "both price m for any provider on overlapping days"
    )


def test_consecutive_rows_are_fine(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[[price]]\nmodel = "m"\ninput = 1\noutput = 1\nvalid_to = 2026-06-01\n'
        '[[price]]\nmodel = "m"\ninput = 2\noutput = 2\nvalid_from = 2026-06-01\n',
    )
    book = PriceBook.load([path], include_bundled=False)
    before = book.lookup("m", on=date(2026, 5, 31))
    after = book.lookup("m", on=date(2026, 6, 1))
    assert before is not None and after is not None
    assert (before.rates.input, after.rates.input) == (Decimal(1), Decimal(2))


def test_a_missing_file_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="cannot read price file"):
        PriceBook.load([tmp_path / "absent.toml"])


def test_the_example_in_the_docs_loads_and_behaves_as_documented(tmp_path: Path) -> None:
    docs = Path(__file__).resolve().parents[3] / "docs" / "pricing.md"
    example = docs.read_text("utf-8").split("```toml\n", 1)[1].split("```", 1)[0]
    book = PriceBook.load([write(tmp_path, example)])
    mock = book.lookup("mock-sonnet-latest", "whatever", on=DAY)
    assert mock is not None
    assert mock.rates.cache_write_1h == Decimal(6)
    for name in ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "claude-sonnet-4.5"):
        inside = book.lookup(name, "anthropic", on=date(2026, 12, 31))
        outside = book.lookup(name, "anthropic", on=date(2027, 1, 1))
        assert inside is not None and outside is not None
        assert (inside.rates.input, outside.rates.input) == (Decimal("2.4"), Decimal(3))
