# cpu_links.sh - sourced by run_tests.sh in the CPU part: every local link in
# README.md and docs/*.md resolves.  A #fragment is cut off to find the file,
# and into a markdown page it must name one of its headings as GitHub anchors
# them (lower case, punctuation dropped, spaces to dashes).  Fenced code blocks
# are not prose: `[&](int kt)` there is a lambda, not a link.
prose() { awk '/^ *```/ { fence = !fence; next } !fence' "$1"; }
heading_anchors() { sed -n 's/^#\{1,6\} //p' "$1" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'; }
link_problems() {   # link_problems FILE: one line per local link of FILE that does not resolve
    local f=$1 base link path target
    base=$(dirname "$f")
    for link in $(prose "$f" | grep -o '](\([^)]*\))' | sed 's/^](//; s/)$//' | grep -v '^http' | sort -u); do
        path=${link%%#*}; target=$base/${path:-$(basename "$f")}
        if [ ! -e "$target" ]; then echo "$link: no file $target"
        elif [[ $link == *#* && $target == *.md ]] && ! heading_anchors "$target" | grep -qx -- "${link#*#}"; then
            echo "$link: $target has no heading #${link#*#}"
        fi
    done
}
for f in README.md docs/*.md; do
    nlinks=$(prose "$f" | grep -o '](\([^)]*\))' | grep -vc '](http')
    check "docs: every local link in $f resolves ($nlinks links)" bash -c "$(declare -f prose heading_anchors link_problems); p=\$(link_problems '$f'); [ -z \"\$p\" ] || { echo \"\$p\"; false; }"
done
# The check itself: a fixture page with three fine links (a file, a heading with
# punctuation, its own heading) and three broken ones (no such heading, no file twice);
# a code block's `[&](int kt)` is not a fourth.
link_problems tests/fixtures/links/page.md >"$tmp/links.self"
check "docs: the link check finds the fixture page's three broken links, and only those" bash -c "
    [ \$(wc -l <$tmp/links.self) -eq 3 ] && grep -q '^other.md#no-such-heading: ' $tmp/links.self &&
    grep -q '^missing.md#a-heading: no file' $tmp/links.self && grep -q '^missing.md: no file' $tmp/links.self || { cat $tmp/links.self; false; }"
