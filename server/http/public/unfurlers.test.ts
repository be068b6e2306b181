import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isUnfurler } from './unfurlers';

/** User agents the previewers send (as they appear in access logs and the services' own documentation). */
const BOTS = [
  'WhatsApp/2.23.20.0',
  'WhatsApp/2.19.81 A',
  'WhatsApp/2.21.12.21 i',
  'WhatsApp', // Signal's link previews
  'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  'Slackbot 1.0 (+https://api.slack.com/robots)',
  'Slack-ImgProxy (+https://api.slack.com/robots)',
  'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  'facebookexternalhit/1.1',
  'Facebot',
  // iMessage's link preview
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0',
  'Twitterbot/1.0',
  'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
  'TelegramBot (like TwitterBot)',
  'Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 skype-url-preview@microsoft.com',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/51.0.2704.103 Safari/537.36 SkypeUriPreview Preview/0.5', // Teams
  'MicrosoftPreview/2.0 +https://aka.ms/MicrosoftPreview',
  'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)',
  'http.rb/5.1.1 (Mastodon/4.2.0; +https://mastodon.social/)',
  'Mozilla/5.0 (compatible; redditbot/1.0; +http://www.reddit.com/feedback)',
  'Mozilla/5.0 (compatible; Embedly/0.2; +http://support.embed.ly/)',
  'Iframely/1.3.1 (+https://iframely.com/docs/about)',
  'Bluesky Cardyb/1.1',
  'Synapse (bot; +https://github.com/matrix-org/synapse)',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 (Windows NT 6.1; rv:6.0) Gecko/20110814 Firefox/6.0 Google (+https://developers.google.com/+/web/snippet/) Google-PageRenderer',
];

/** People's browsers, in-app browsers, desktop chat apps and download tools: they get what they ask for. */
const PEOPLE = [
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/470.0.0.41.109;FBBV/600000000]',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.0.0 Mobile Safari/537.36 Instagram 355.0.0.0.0 Android',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.0.0 Mobile Safari/537.36 Telegram-Android/11.2.2',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Slack/4.41.97 Chrome/128.0.6613.186 Electron/32.2.5 Safari/537.36 Sonic Slack_SSB/4.41.97',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Teams/1.7.00.13456 Chrome/85.0.4183.121 Electron/10.4.7 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [LinkedInApp]/9.30.1',
  'curl/8.5.0',
  'Wget/1.21.3',
  'aria2/1.37.0',
  '',
];

test('link-preview bots are recognised by their user agents', () => {
  for (const ua of BOTS) assert.equal(isUnfurler(ua), true, ua);
});

test('browsers, in-app browsers, chat desktop apps and download tools are not taken for bots', () => {
  for (const ua of PEOPLE) assert.equal(isUnfurler(ua), false, ua);
  assert.equal(isUnfurler(undefined), false);
});
