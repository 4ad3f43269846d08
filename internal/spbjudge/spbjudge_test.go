package spbjudge

import "testing"

func TestFailedExcusesByAssertionAndDetail(t *testing.T) {
	res := []Result{
		{AssertionID: "tck-id-payloads-alias-birth-requirement", Status: "fail", Detail: "metric 'Node Control/Rebirth' lacks alias while edge uses aliases"},
		{AssertionID: "tck-id-payloads-alias-birth-requirement", Status: "fail", Detail: "metric 'bdSeq' lacks alias while edge uses aliases"},
		{AssertionID: "tck-id-topics-nbirth-bdseq-matching", Status: "fail", Detail: "NBIRTH bdSeq=0, CONNECT Will bdSeq=2 (must match)"},
		{AssertionID: "tck-id-topics-nbirth-bdseq-matching", Status: "fail", Detail: "NBIRTH bdSeq=2, CONNECT Will bdSeq=3 (must match)"},
		{AssertionID: "tck-id-topics-nbirth-bdseq-matching", Status: "pass"},
	}
	failed, excused := Failed(res, AcrossSessions([]uint64{0, 1, 2}, false))
	if len(excused) != 2 || excused[0] != res[0] || excused[1] != res[2] {
		t.Errorf("excused %v", excused)
	}
	if len(failed) != 2 || failed[0] != res[1] || failed[1] != res[3] {
		t.Errorf("failed %v", failed)
	}
	if got := Summary(res); got != "4 fail, 1 pass" {
		t.Error(got)
	}
}
