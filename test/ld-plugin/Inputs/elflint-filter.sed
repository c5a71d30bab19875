# Drops the two lines eu-elflint always adds for a pbitmap region (it knows
# neither the program header type nor the note type; a region kept as a
# note in a shared PT_NOTE, as with mold, gets the note line for that
# PT_NOTE instead of the program header line), its "No errors", and the
# section and symbol numbers that move when sections are added.
/unknown program header entry type 0x64706d62$/d
/\.note\.pbitmap.: unknown object file note type 1 with owner name .pbitmap./d
/^phdr\[[0-9]*\]: unknown object file note type 1 with owner name .pbitmap. at offset [0-9]*$/d
/^No errors$/d
s/[0-9][0-9]*/N/g
s/\[ *N\]/[N]/g
