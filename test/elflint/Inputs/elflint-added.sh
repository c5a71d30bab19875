#!/bin/sh
# elflint-added.sh PLAIN LINT: the lines of LINT (eu-elflint --gnu-ld's
# output for a program linked with pbitmap) that the same program linked
# without pbitmap (PLAIN) does not get, after elflint-filter.sed.  Lines
# only the plain link gets do not count: the pbitmap link need not be
# worse, not the same.  Writes LINT.plain and LINT.rest beside LINT.
filter=$(dirname "$0")/../../ld-plugin/Inputs/elflint-filter.sed
eu-elflint --gnu-ld "$1" | sed -f "$filter" | sort > "$2.plain"
sed -f "$filter" "$2" | sort > "$2.rest"
comm -13 "$2.plain" "$2.rest"
