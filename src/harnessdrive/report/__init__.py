"""Reports: loading recorded results, building the scoreboard from them and rendering it as text
or JSON."""
