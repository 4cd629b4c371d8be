# bash completion for gzstream: commands, each command's options, the values of options that
# take one of a few, and file names (only compressed ones where a command reads gzip data).
# Installed as $(PREFIX)/share/bash-completion/completions/gzstream; it needs only bash itself,
# not the bash-completion package's helpers.

_gzstream_commands="pack unpack test list index send receive cache help"
_gzstream_cache_actions="put get list remove clear prune help"

_gzstream_levels="-0 -1 -2 -3 -4 -5 -6 -7 -8 -9"
_gzstream_common="-q --quiet -v --verbose -h --help -V --version -L --license"
_gzstream_pack_options="-c --stdout -o --output -f --force -r --recursive -S --suffix
    $_gzstream_levels -10 -11 -12 --fast --best --level --chunk-size -p --threads -b --block-size
    --engine --bgzf --index --rsyncable -N --name -n --no-name --rm -k --keep --synchronous
    --progress --no-progress --tar --mtime --owner --group --numeric-owner"
_gzstream_unpack_options="-c --stdout -o --output -f --force -r --recursive -S --suffix
    --chunk-size -p --threads --max-output --strict --offset --length --whole-lines --lines --index --write-index
    -N --name -n --no-name --rm -k --keep --synchronous --progress --no-progress -C --directory --extract --links-outside
    --same-owner --no-same-owner"
_gzstream_test_options="-f --force -r --recursive -S --suffix --chunk-size -p --threads
    --max-output --index --write-index --progress --no-progress"
_gzstream_list_options="--json --members -f --force -r --recursive -S --suffix --max-output"
_gzstream_index_options="-o --output -f --force --span --strict --plan --json --no-tar"
_gzstream_send_options="$_gzstream_levels -10 -11 -12 --fast --best --level --chunk-size
    -p --threads -b --block-size --engine --bgzf --rsyncable -N --name -n --no-name
    --timeout --deadline --key-file"
_gzstream_receive_options="-o --output -f --force --chunk-size -p --threads --max-output
    --strict --timeout --deadline --key-file"
# gzip mode (no command word) takes gzip's options as well as every one above but index's.
_gzstream_gzip_options="-d --decompress --uncompress -t --test -l --list
    -c --stdout -o --output -f --force -r --recursive -S --suffix
    $_gzstream_levels -10 -11 -12 --fast --best --level --chunk-size -p --threads -b --block-size
    --max-output --strict --json --offset --length --lines --engine --bgzf --index --write-index
    --rsyncable --synchronous -N --name -n --no-name --rm -k --keep --progress --no-progress"
_gzstream_cache_options="--dir --key-file --max-size --max-age $_gzstream_levels -10 -11 -12
    --level -p --threads -o --output -f --force --json -q --quiet -v --verbose -h --help"

# Adds to COMPREPLY the names that complete $1: every file, or with $2 set only directories and
# files whose name ends in a gzip suffix (.gz .tgz .taz .bgz .z -gz -z _z, in any case, as
# unpack recognises them) or in $3, -S's suffix.
_gzstream_files() {
    local cur=$1 compressed=$2 suffix=$3 name lower
    local -a names
    # One name a line, not split on blanks nor expanded as a pattern ('*.gz' is a name too).
    mapfile -t names < <(compgen -f -- "$cur")
    for name in "${names[@]}"; do
        if [[ -n $compressed && ! -d $name ]]; then
            lower=${name,,}
            case $lower in
                *.gz | *.tgz | *.taz | *.bgz | *.z | *-gz | *-z | *_z) ;;
                *) [[ -n $suffix && $name == *"$suffix" ]] || continue ;;
            esac
        fi
        COMPREPLY+=("$name")
    done
    compopt -o filenames 2>/dev/null
}

_gzstream() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=""
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    # With '=' among COMP_WORDBREAKS, --level=3 arrives as three words: --level = 3.
    if [[ $cur == "=" ]]; then
        cur=""
    elif [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    fi
    COMPREPLY=()

    local program=${COMP_WORDS[0]##*/} command="" action="" suffix="" decompress="" operands=0
    local i word takesValue
    [[ $program == gunzip || $program == zcat || $program == gzcat ]] && decompress=1
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        takesValue=""
        case $word in
            -S | --suffix | -o | --output | --key-file | --dir | --engine | --level | -p | \
                --threads | --processes | -b | --block-size | --blocksize | --chunk-size | \
                --max-output | --offset | --length | --span | --plan | --lines | --timeout | --deadline | \
                --max-size | --max-age | --mtime | --owner | --group)
                takesValue=1
                ;;
            --index) [[ $command == unpack || $command == test ]] && takesValue=1 ;;
            -C | --directory) [[ $command == unpack ]] && takesValue=1 ;;
            --) break ;;
            --decompress | --uncompress | --test | --list) decompress=1 ;;
            --*) ;;
            -) operands=$((operands + 1)) ;;
            -*[dtl]*) [[ -z $command ]] && decompress=1 ;;
            -*) ;;
            *)
                if ((i == 1)) && [[ -z $decompress ]] && [[ " $_gzstream_commands " == *" $word "* ]]; then
                    command=$word
                elif [[ $command == cache && -z $action ]]; then
                    action=$word
                else
                    operands=$((operands + 1))
                fi
                ;;
        esac
        if [[ -n $takesValue ]]; then
            # The value is the next word, or the one after '=' (--suffix=.z).
            [[ ${COMP_WORDS[i + 1]} == "=" ]] && i=$((i + 1))
            i=$((i + 1))
            [[ $word == -S || $word == --suffix ]] && suffix=${COMP_WORDS[i]}
        fi
    done

    # An option's value.
    case $prev in
        --engine) COMPREPLY=($(compgen -W "chunks zlib" -- "$cur")); return 0 ;;
        --level) COMPREPLY=($(compgen -W "0 1 2 3 4 5 6 7 8 9 10 11 12" -- "$cur")); return 0 ;;
        -o | --output | --key-file) _gzstream_files "$cur"; return 0 ;;
        --index)
            # pack's --index is a flag; unpack's and test's takes the index's path.
            if [[ $command == unpack || $command == test ]]; then
                _gzstream_files "$cur"
                return 0
            fi
            ;;
        --dir | -C | --directory)
            mapfile -t COMPREPLY < <(compgen -d -- "$cur")
            compopt -o filenames 2>/dev/null
            return 0
            ;;
        -S | --suffix | -p | --threads | --processes | -b | --block-size | --blocksize | \
            --chunk-size | --max-output | --offset | --length | --lines | --span | --timeout | \
            --deadline | --max-size | --max-age | --mtime)
            return 0
            ;;
        --owner) mapfile -t COMPREPLY < <(compgen -u -- "$cur"); return 0 ;;
        --group) mapfile -t COMPREPLY < <(compgen -g -- "$cur"); return 0
            ;;
    esac

    local options
    case $command in
        pack) options=$_gzstream_pack_options ;;
        unpack) options=$_gzstream_unpack_options ;;
        test) options=$_gzstream_test_options ;;
        list) options=$_gzstream_list_options ;;
        index) options=$_gzstream_index_options ;;
        send) options=$_gzstream_send_options ;;
        receive) options=$_gzstream_receive_options ;;
        cache) options=$_gzstream_cache_options ;;
        help) options="" ;;
        *) options=$_gzstream_gzip_options ;;
    esac
    if [[ $cur == -* ]]; then
        [[ $command == cache ]] || options="$options $_gzstream_common"
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
        return 0
    fi

    case $command in
        "")
            ((COMP_CWORD == 1)) && [[ -z $decompress ]] &&
                COMPREPLY=($(compgen -W "$_gzstream_commands" -- "$cur"))
            _gzstream_files "$cur" "$decompress" "$suffix"
            ;;
        help) ((COMP_CWORD == 2)) && COMPREPLY=($(compgen -W "$_gzstream_commands" -- "$cur")) ;;
        pack) _gzstream_files "$cur" ;;
        unpack | test | list | index) _gzstream_files "$cur" 1 "$suffix" ;;
        send) ((operands == 1)) && _gzstream_files "$cur" ;;
        receive) ;;
        cache)
            if [[ -z $action ]]; then
                COMPREPLY=($(compgen -W "$_gzstream_cache_actions" -- "$cur"))
            elif [[ $action == put ]] && ((operands == 1)); then
                _gzstream_files "$cur"
            fi
            ;;
    esac
    return 0
}

complete -F _gzstream gzstream
