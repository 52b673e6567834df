package cli

import (
	"strings"
	"testing"
)

// App gives each command's App, as --help shows it, without running its
// action (which, with no controller, would fail).
func TestApp(t *testing.T) {
	for _, name := range CommandNames() {
		t.Run(name, func(t *testing.T) {
			app, err := App(name)
			if err != nil {
				t.Fatal(err)
			}
			if app.Name != name || app.Usage == "" || len(app.VisibleFlags()) == 0 {
				t.Errorf("app %q usage %q, %d flags", app.Name, app.Usage, len(app.VisibleFlags()))
			}
			if !strings.Contains(app.CustomAppHelpTemplate, "CONTROLLER:") {
				t.Error("the help template lacks CONTROLLER")
			}
		})
	}
	if _, err := App("qnope"); err == nil {
		t.Error("App(qnope) gave no error")
	}
}
