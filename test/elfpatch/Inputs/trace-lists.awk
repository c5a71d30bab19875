# trace-lists.awk: reads a trace written by elfpatch --record.
#   -v file=PATH -v list=calls|order|pages
#       prints the entries of that list of PATH's first block, one a
#       line (pages as single page numbers), in the trace's order.
#   -v check=1
#       checks every block: each 'order' page is in its 'pages', each
#       page holding a 'calls' start is in its 'order', and in a trace
#       of version 3 each page of a block that has an 'order' is in it;
#       prints one line per violation and "checked N blocks" at the end.
$1 == "pbitmap-trace" { version = $2 }
$1 == "file" { path = substr($0, 6); block++; delete inpages; delete inorder
               n_calls = 0; has_order = 0 }
$1 == "order" { has_order = 1 }
$1 == "pages" || $1 == "order" || $1 == "calls" {
  n = split($2, item, ",")
  for (i = 1; i <= n; i++) {
    split(item[i], r, "-")
    last = (2 in r) ? r[2] : r[1]
    for (v = r[1] + 0; v <= last + 0; v++) {
      if ($1 == "pages") inpages[v] = 1
      if ($1 == "order") inorder[v] = 1
      if ($1 == "calls") called[++n_calls] = v
      if (!check && path == file && !(path in done) && $1 == list)
        print v
    }
    delete r
  }
}
$1 == "end" {
  if (check) {
    for (p in inorder)
      if (!(p in inpages))
        print path ": order page " p " is not in pages"
    for (p in inpages)
      if (version >= 3 && has_order && !(p in inorder))
        print path ": page " p " is not in order"
    for (i = 1; i <= n_calls; i++)
      if (!(int(called[i] / 4096) in inorder))
        print path ": the page of call " called[i] " is not in order"
  }
  done[path] = 1
}
END { if (check) print "checked " block " blocks" }
