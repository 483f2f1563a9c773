"""rendering/markdown.py: the one markdown table writer and the one markdown-to-HTML reader."""

from kvlab.rendering.markdown import markdown_table, markdown_to_html


def test_a_table_cell_cannot_split_the_table():
    assert markdown_table(["a", "b"], [["x|y", 2]]) == "| a | b |\n|---|---|\n| x/y | 2 |"


def test_a_report_renders_three_heading_levels_down_with_its_tables_and_lists():
    text = ("# run\n\nSome *words* and `code` & more.\n\n- one\n- two\n\n"
            + markdown_table(["engine", "ops/s"], [["sharded", "990000"]]) + "\n")
    html = markdown_to_html(text)
    assert '<h3 id="run">run</h3>' in html
    assert "<em>words</em>" in html and "<code>code</code>" in html and "&amp;" in html
    assert "<li>one</li>" in html and "<li>two</li>" in html
    assert "<th>engine</th>" in html and "<td>990000</td>" in html
