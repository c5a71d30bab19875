# line-limit.awk: names every input file longer than 500 lines, then
# prints how many files it read; exits 1 when it named one.
FNR == 1 { files++ }
FNR == 501 { print FILENAME ": over 500 lines"; over = 1 }
END { print "files: " files; exit over }
