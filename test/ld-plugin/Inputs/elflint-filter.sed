# Drops the two lines eu-elflint always adds for a pbitmap region (it knows
# neither the program header type nor the note type), its "No errors", and
# the section and symbol numbers that move when sections are added.
/unknown program header entry type 0x64706d62$/d
/\.note\.pbitmap.: unknown object file note type 1 with owner name .pbitmap./d
/^No errors$/d
s/[0-9][0-9]*/N/g
