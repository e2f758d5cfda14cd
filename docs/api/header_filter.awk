# Doxygen INPUT_FILTER for failslow's headers: the opening // block of a header (its synopsis:
# what, formula, complexity, accuracy, errors) becomes the file's documentation, verbatim, so
# the reference carries every synopsis. Line for line, so doxygen's line numbers stay right.
function flush_head(    i) {
  for (i = 1; i <= n; ++i) printf "%s%s\n", head[i], (i == n ? " \\endverbatim */" : "")
  n = 0
}
NR == 1 && /^\/\/ / {
  in_head = 1
  name = FILENAME
  sub(/.*\//, "", name)
  head[++n] = "/** \\file " name " \\verbatim " substr($0, 4)
  next
}
in_head && /^\/\// {
  head[++n] = substr($0, 3)
  next
}
in_head {
  flush_head()
  in_head = 0
}
{ print }
END { if (in_head) flush_head() }
