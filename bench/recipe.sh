#!/usr/bin/env bash
# The hand-run update recipe tether replaces: a loop over every shipped path that applies the
# decision table with `cmp -s`, `cp` and `diff -u`, one process per step, as people and agents
# run it today.
#
# usage: recipe.sh BASE_DIR LATEST_DIR PROJECT_DIR PATHS_TSV
#   BASE_DIR    the installed release (B), extracted
#   LATEST_DIR  the new release (L), extracted
#   PROJECT_DIR the adopter's tree (A); changed in place
#   PATHS_TSV   one "class<TAB>path" line for every path of B or L
# env: RECIPE_MERGE=diff (default: a both-sides change becomes an upstream patch for a person,
#      written with `diff -u`) or git (`git merge-file --diff3` in place, conflicts as markers)
#
# Backups go to PROJECT_DIR/.recipe/backup, patches to PROJECT_DIR/.recipe/merge. The last line
# printed is a summary of the counts.
set -u

base=$1 latest=$2 project=$3 list=$4
merge_mode=${RECIPE_MERGE:-diff}
backup_root="$project/.recipe/backup"
merge_root="$project/.recipe/merge"
declare -i added=0 removed=0 overwritten=0 skipped=0 merged=0 conflicts=0 deletions=0

backup() {  # backup REL: keep the adopter's bytes before replacing them
    local target="$backup_root/$1"
    mkdir -p "${target%/*}"
    cp -p "$project/$1" "$target"
}

copy_latest() {  # copy_latest REL
    local target="$project/$1"
    mkdir -p "${target%/*}"
    cp "$latest/$1" "$target"
}

while IFS=$'\t' read -r cls rel; do
    b="$base/$rel" a="$project/$rel" l="$latest/$rel"
    if [[ ! -e $l ]]; then                      # dropped upstream: surface, never delete
        if [[ -e $a ]]; then
            echo "delete? $rel"
            deletions+=1
        else
            removed+=1
        fi
    elif [[ ! -e $a ]]; then
        if [[ ! -e $b ]]; then copy_latest "$rel"; added+=1; else removed+=1; fi
    elif [[ $cls == owned && ! -e $b ]]; then
        backup "$rel"; copy_latest "$rel"; overwritten+=1
    elif [[ -e $b ]] && cmp -s "$b" "$l"; then  # upstream did not change it
        skipped+=1
    elif [[ -e $b ]] && cmp -s "$a" "$b"; then  # we did not change it
        backup "$rel"; copy_latest "$rel"; overwritten+=1
    elif cmp -s "$a" "$l"; then                 # both made the same change
        skipped+=1
    else                                        # both changed it
        [[ -e $b ]] || b=/dev/null
        backup "$rel"
        if [[ $merge_mode == git ]]; then
            if git merge-file --diff3 -L mine -L base -L theirs "$a" "$b" "$l"; then
                merged+=1
            else
                conflicts+=1
            fi
        else
            patch="$merge_root/$rel.patch"
            mkdir -p "${patch%/*}"
            diff -u "$b" "$l" >"$patch"
            echo "merge by hand: $rel ($patch)"
            conflicts+=1
        fi
    fi
done <"$list"

echo "added=$added removed=$removed overwritten=$overwritten skipped=$skipped" \
    "merged=$merged conflicts=$conflicts deletions=$deletions"
