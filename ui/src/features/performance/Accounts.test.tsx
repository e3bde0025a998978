import { cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { apiError, FakeTransport } from "../../shared/api/fake";
import type { Account } from "../../shared/api/generated";
import { makeCtx, WithAppErrors } from "../../shared/testing/utils";
import { Accounts } from "./Accounts";

afterEach(cleanup);

const wechat: Account = { id: "acc_1", platform: "wechat", name: "晨读", handle: null, createdAt: "2026-11-01T00:00:00Z", updatedAt: "2026-11-01T00:00:00Z" };

const appBanner = () => within(screen.getByTestId("app-error")).findByTestId("error-banner");
const ownBanner = () => within(screen.getByTestId("under-test")).queryByTestId("error-banner");

describe("publishing accounts", () => {
  it("a refused add goes to the app's one banner and the form keeps what was typed", async () => {
    const transport = new FakeTransport()
      .on("account.list", () => ({ accounts: [] }))
      .on("account.create", () => {
        throw apiError("VALIDATION", "`name` is too long.");
      });
    render(
      <WithAppErrors ctx={makeCtx(transport, "zh")}>
        <Accounts />
      </WithAppErrors>,
    );
    await screen.findByTestId("accounts-empty");
    fireEvent.change(screen.getByTestId("account-name"), { target: { value: "很长的名字" } });
    fireEvent.click(screen.getByTestId("account-add"));
    expect((await appBanner()).dataset.code).toBe("VALIDATION");
    expect(ownBanner()).toBeNull();
    expect((screen.getByTestId("account-name") as HTMLInputElement).value).toBe("很长的名字");
  });

  it("deleting an account a publication names is refused in the app's one banner, with the engine's hint", async () => {
    const transport = new FakeTransport()
      .on("account.list", () => ({ accounts: [wechat] }))
      .on("perf.accountDays", () => ({ account: wechat, days: [] }))
      .on("account.delete", () => {
        throw apiError("CONFLICT", "2 publications name this account.", [{ id: "reassign_first", message: "Reassign the publications first." }]);
      });
    render(
      <WithAppErrors ctx={makeCtx(transport, "en")}>
        <Accounts />
      </WithAppErrors>,
    );
    fireEvent.click(await screen.findByTestId("account-delete"));
    const banner = await appBanner();
    expect(banner.dataset.code).toBe("CONFLICT");
    expect(banner.textContent).toContain("Reassign the publications first.");
    expect(ownBanner()).toBeNull();
    expect(screen.getAllByTestId("account-item")).toHaveLength(1);
  });
});
