"""The style both report pages share (the report and each attempt's transcript page): colours as variables, a
dark scheme that overrides them (declared after the base rules, so it wins), and a layout that fits 390 px."""

from __future__ import annotations

__all__ = ["BASE_STYLE"]

# Light colours, then the dark scheme's: each pair of text and background passes WCAG AA (4.5:1) in its scheme.
BASE_STYLE = """
:root{color-scheme:light dark;--bg:#fff;--fg:#222;--muted:#555;--line:#ccc;--head:#f2f2f2;--soft:#f4f4f4;
--link:#0645ad;--ok:#eaf6ea;--bad:#fbeaea;--warn:#fff4d6;--warn-line:#b38f00}
body{font-family:sans-serif;margin:24px;color:var(--fg);background:var(--bg);max-width:1100px}
a{color:var(--link)}h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid var(--line);padding-bottom:4px;
margin-top:32px}h3{font-size:14px;margin-bottom:4px}p,h1,h2,h3,li{overflow-wrap:break-word}
.scroll{overflow-x:auto;max-width:100%}svg{max-width:100%;height:auto;background:#fff;border-radius:2px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}caption{text-align:left;font-size:12px;color:var(--muted);
padding:2px 0}th,td{border:1px solid var(--line);padding:3px 6px;text-align:left;vertical-align:top}
th{background:var(--head)}figure{margin:8px 0}figcaption,.note{font-size:12px;color:var(--muted)}
code{font-size:12px}.meta{font-size:14px;color:var(--muted)}
.stand-in{font-size:14px;background:var(--warn);border:1px solid var(--warn-line);padding:8px}
.excluded{background:var(--bad)}
.admitted{background:var(--ok)}
@media (max-width:600px){body{margin:8px}table{font-size:12px}}
@media (prefers-color-scheme:dark){:root{--bg:#111;--fg:#eee;--muted:#bbb;--line:#555;--head:#2a2a2a;--soft:#1c1c1c;
--link:#8cf;--ok:#1d3a1d;--bad:#3f2020;--warn:#3a3218;--warn-line:#806a20}}
"""
