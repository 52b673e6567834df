package noded

import (
	"strings"

	"github.com/sharq-hpc/sharq/api"
)

// notice tells the sessions of a run the controller's notice (MsgNotice,
// e.g. that the run's GPUs were found idle), as the node's own notices
// are told: kept for the sessions that connect later. A notice for a run
// this node does not run is dropped; its text is cut to
// api.MaxNoticeText bytes and rid of control characters, since it goes
// to a terminal.
func (s *supervisor) notice(o api.NoticeOrder) {
	j := s.get(o.JobID)
	if j == nil || j.rec.Run != o.Run {
		s.log.Warn("notice for a run not on this node", "job", o.JobID, "run", o.Run)
		return
	}
	s.sessions.notice(o.JobID, o.Run, noticeText(o.Text))
}

// noticeText makes a controller's notice fit for a terminal.
func noticeText(t string) string {
	if len(t) > api.MaxNoticeText {
		t = t[:api.MaxNoticeText]
	}
	t = strings.ToValidUTF8(t, "")
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, t)
}
