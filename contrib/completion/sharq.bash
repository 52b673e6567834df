# bash completion for sharq's qsub, qstat, qdel, qhold, qrls, qalter, qexec, qselect, pbsnodes,
# qsig, qrerun, qmove, qorder, tracejob and sharqctl.
# Install: make install puts it in share/bash-completion/completions/ as sharq, with a link
# for each command below (bash-completion loads it when one is first completed); or copy it to
# /etc/bash_completion.d/ (or source it from ~/.bashrc).

# Job ids of the current jobs (qstat -f has them untruncated).
_sharq_jobs() {
    qstat -f "$@" 2>/dev/null | sed -n 's/^Job Id: //p'
}

# Share (queue) names, from qstat -Q.
_sharq_shares() {
    qstat -Q 2>/dev/null | awk 'NR > 3 { print $1 }'
}

# Node names, from sharqctl show nodes.
_sharq_nodes() {
    sharqctl show nodes 2>/dev/null | awk 'NR > 2 { print $1 }'
}

_sharq_qsub() {
    local cur prev
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local i
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} == -- ]]; then
            # qsub [options] -- command args: complete commands, then files
            if ((i == COMP_CWORD - 1)); then
                COMPREPLY=($(compgen -c -- "$cur"))
            else
                COMPREPLY=($(compgen -f -- "$cur"))
            fi
            return
        fi
    done
    case $prev in
        -q) COMPREPLY=($(compgen -W "$(_sharq_shares)" -- "$cur")); return ;;
        -l) COMPREPLY=($(compgen -W "ngpus= ncpus= mem= walltime= select= nodes=" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
        -j) COMPREPLY=($(compgen -W "oe eo n" -- "$cur")); return ;;
        -W) COMPREPLY=($(compgen -W "depend=afterok: depend=afternotok: depend=afterany: depend=after: block=true grace=" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
        -o|-e) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        -v) COMPREPLY=($(compgen -v -- "$cur")); return ;;
        -N|-p|-J|-a|-C|--image) return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "-N -q -l -p -o -e -j -v -V -h -I -W -J -a -C --image --help --" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}

_sharq_qstat() {
    local cur prev
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    case $prev in
        -u) COMPREPLY=($(compgen -u -- "$cur")); return ;;
        -F) COMPREPLY=($(compgen -W "json dsv sharq-json" -- "$cur")); return ;;
        -D|--since) return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "-a -i -r -H -T -f -F -D -x --since -u -n -s -1 -w -G -M -J -p -t -Q -B --help" -- "$cur"))
        return
    fi
    local w
    for w in "${COMP_WORDS[@]}"; do
        if [[ $w == -Q ]]; then
            COMPREPLY=($(compgen -W "$(_sharq_shares)" -- "$cur"))
            return
        fi
    done
    # A job id or a destination (a share).
    COMPREPLY=($(compgen -W "$(_sharq_jobs) $(_sharq_shares)" -- "$cur"))
}

# qdel, qhold, qrls: job ids.
_sharq_ids() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--help" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -W "$(_sharq_jobs)" -- "$cur"))
}

_sharq_qalter() {
    local cur prev
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    case $prev in
        -l) COMPREPLY=($(compgen -W "walltime=" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
        -W) COMPREPLY=($(compgen -W "depend=afterok: depend=afternotok: depend=afterany: depend=after: depend=" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
        -p|-N|-a) return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "-p -l -N -W -a --help" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -W "$(_sharq_jobs)" -- "$cur"))
}

_sharq_qexec() {
    local cur prev i
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} == -- ]]; then
            COMPREPLY=($(compgen -c -- "$cur"))
            return
        fi
    done
    case $prev in
        -n) COMPREPLY=($(compgen -W "$(_sharq_nodes)" -- "$cur")); return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "-n --help --" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -W "$(_sharq_jobs)" -- "$cur"))
}

_sharq_qselect() {
    local cur prev
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    case $prev in
        -u) COMPREPLY=($(compgen -u -- "$cur")); return ;;
        -q) COMPREPLY=($(compgen -W "$(_sharq_shares)" -- "$cur")); return ;;
        -s) COMPREPLY=($(compgen -W "Q H W R E B F" -- "$cur")); return ;;
        -N) return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "-u -s -q -N -x -J -t --help" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -W "$(_sharq_shares)" -- "$cur"))
}

_sharq_pbsnodes() {
    local cur prev
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    case $prev in
        -F) COMPREPLY=($(compgen -W "json dsv" -- "$cur")); return ;;
        -D|-C) return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "-a -v -l -F -D -o -r -c -C --help" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -W "$(_sharq_nodes)" -- "$cur"))
}

_sharq_qsig() {
    local cur prev
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    case $prev in
        -s) COMPREPLY=($(compgen -W "TERM INT HUP QUIT KILL USR1 USR2 ALRM CONT WINCH" -- "$cur")); return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "-s --help" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -W "$(_sharq_jobs)" -- "$cur"))
}

_sharq_qmove() {
    local cur=${COMP_WORDS[COMP_CWORD]} i n=0
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--help" -- "$cur"))
        return
    fi
    for ((i = 1; i < COMP_CWORD; i++)); do
        [[ ${COMP_WORDS[i]} == -* ]] || ((n++))
    done
    if ((n == 0)); then
        COMPREPLY=($(compgen -W "$(_sharq_shares)" -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$(_sharq_jobs)" -- "$cur"))
    fi
}

_sharq_tracejob() {
    local cur prev
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    case $prev in
        -n) return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "-n -z --help" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -W "$(_sharq_jobs -x)" -- "$cur"))
}

_sharq_sharqctl() {
    local cur prev
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local cmd=${COMP_WORDS[1]} sub=${COMP_WORDS[2]}
    if ((COMP_CWORD == 1)); then
        COMPREPLY=($(compgen -W "reconfigure show report node job image help --help" -- "$cur"))
        return
    fi
    if ((COMP_CWORD == 2)); then
        case $cmd in
            show) COMPREPLY=($(compgen -W "shares nodes topology config job" -- "$cur")) ;;
            node) COMPREPLY=($(compgen -W "drain resume" -- "$cur")) ;;
            job) COMPREPLY=($(compgen -W "priority hold release" -- "$cur")) ;;
            image) COMPREPLY=($(compgen -W "import" -- "$cur")) ;;
            report) COMPREPLY=($(compgen -W "usage jobs" -- "$cur")) ;;
            help) COMPREPLY=($(compgen -W "reconfigure show report node job image" -- "$cur")) ;;
        esac
        return
    fi
    case $cmd/$sub in
        show/shares|show/nodes|show/topology) COMPREPLY=($(compgen -W "--json --help" -- "$cur")) ;;
        report/usage)
            case $prev in
                --by) COMPREPLY=($(compgen -W "share user partition" -- "$cur")); return ;;
                --format) COMPREPLY=($(compgen -W "table csv json" -- "$cur")); return ;;
                --plot) COMPREPLY=($(compgen -f -- "$cur")); return ;;
            esac
            COMPREPLY=($(compgen -W "--start --end --by --format --plot --user --share --help" -- "$cur")) ;;
        report/jobs)
            case $prev in
                --state) COMPREPLY=($(compgen -W "completed failed deleted" -- "$cur")); return ;;
                --format) COMPREPLY=($(compgen -W "table csv json" -- "$cur")); return ;;
            esac
            COMPREPLY=($(compgen -W "--start --end --user --share --state --limit --format --help" -- "$cur")) ;;
        show/job)
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "--json --help" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "$(_sharq_jobs -x)" -- "$cur"))
            fi ;;
        node/drain|node/resume) COMPREPLY=($(compgen -W "$(_sharq_nodes)" -- "$cur")) ;;
        job/hold|job/release) COMPREPLY=($(compgen -W "$(_sharq_jobs)" -- "$cur")) ;;
        job/priority)
            ((COMP_CWORD == 3)) && COMPREPLY=($(compgen -W "$(_sharq_jobs)" -- "$cur")) ;;
        image/import)
            case $prev in
                --containerd) COMPREPLY=($(compgen -f -- "$cur")); return ;;
                --namespace) return ;;
            esac
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "--containerd --namespace --help" -- "$cur"))
            else
                COMPREPLY=($(compgen -f -- "$cur"))
            fi ;;
    esac
}

complete -F _sharq_qsub qsub
complete -F _sharq_qstat qstat
complete -F _sharq_ids qdel qhold qrls qrerun qorder
complete -F _sharq_qalter qalter
complete -F _sharq_qexec qexec
complete -F _sharq_qselect qselect
complete -F _sharq_pbsnodes pbsnodes
complete -F _sharq_qsig qsig
complete -F _sharq_qmove qmove
complete -F _sharq_tracejob tracejob
complete -F _sharq_sharqctl sharqctl
