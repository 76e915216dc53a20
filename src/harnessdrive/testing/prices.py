"""Price rows for models that exist only in tests, with round rates for hand computation.

    prices = write_mock_prices(tmp_path)          # pass as --prices, or RunOptions.price_files
    # mock-big:   3 input, 0.3 cache read, 3.75 / 6 cache write (5 min / 1 h), 15 output;
    #             above 200,000 prompt tokens: 6, 0.6, 7.5 / 12, 22.5
    # mock-small: 1 input, 0.1 cache read, 1.25 / 2 cache write, 5 output

The rows name no provider, so they price those model ids whichever provider a harness reports.
A worked example (:data:`EXAMPLE_CALLS`, total :data:`EXAMPLE_TOTAL_USD`) has one call over the
long-context threshold and a second model::

    mock-big   2k input, 150k cache read, 10k cache write (4k of it 1 h), 3k output: 162k prompt
               0.006 + 0.045 + 6k x 3.75 = 0.0225 + 4k x 6 = 0.024 + 0.045        = 0.1425
    mock-big   5k input, 240k cache read, 4k output: 245k prompt > 200k, long rates
               5k x 6 = 0.03 + 240k x 0.6 = 0.144 + 4k x 22.5 = 0.09              = 0.264
    mock-small 10k input, 20k cache read, 1k output
               0.01 + 0.002 + 0.005                                              = 0.017
    total                                                                          0.4235
"""

from __future__ import annotations

from pathlib import Path

from harnessdrive.transcript.models import ModelCall, Usage

MOCK_PRICES_TOML = """\
[[price]]
model = "mock-big"
input = 3
output = 15
cache_read = 0.3
cache_write_5m = 3.75
cache_write_1h = 6
long_context_threshold = 200_000
long_input = 6
long_output = 22.5
long_cache_read = 0.6
long_cache_write_5m = 7.5
long_cache_write_1h = 12

[[price]]
model = "mock-small"
input = 1
output = 5
cache_read = 0.1
cache_write_5m = 1.25
cache_write_1h = 2
"""

EXAMPLE_CALLS = (
    ModelCall(
        model="mock-big",
        usage=Usage(
            input=2_000, cache_read=150_000, cache_write=10_000, cache_write_1h=4_000, output=3_000
        ),
    ),
    ModelCall(model="mock-big", usage=Usage(input=5_000, cache_read=240_000, output=4_000)),
    ModelCall(model="mock-small", usage=Usage(input=10_000, cache_read=20_000, output=1_000)),
)
EXAMPLE_TOTAL_USD = 0.4235
"""The hand-computed cost of :data:`EXAMPLE_CALLS` at :data:`MOCK_PRICES_TOML`."""

MOCK_SMALL_HIGH_USD = 0.8875
"""The assumed long run (150k input, 3M cache read, 150k cache write, 50k output) on mock-small:
0.15 + 0.30 + 0.1875 + 0.25; the high estimate of a mock-small harness without history."""
MOCK_SMALL_LOW_USD = 0.08
"""The assumed short run (20k input, 150k cache read, 20k cache write, 4k output) on mock-small:
0.02 + 0.015 + 0.025 + 0.02."""


def write_mock_prices(folder: Path, text: str = MOCK_PRICES_TOML) -> Path:
    """Write ``prices.toml`` into ``folder`` and return its path."""
    path = folder / "prices.toml"
    path.write_text(text)
    return path
