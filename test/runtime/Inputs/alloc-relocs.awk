# alloc-relocs.awk: from llvm-readelf -rW of an object, the distinct
# (relocation section, relocation type) pairs outside the debug sections,
# sorted: what the code and data of the object need relocated.
/^Relocation section/ { sec = $3 }
$3 ~ /^R_/ && sec !~ /debug/ { print sec, $3 | "sort -u" }
